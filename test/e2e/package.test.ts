import { execa } from 'execa';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/run.js';
import { ROUTES, methodName } from '../../src/core/routes.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const tsc = join(root, 'node_modules/typescript/bin/tsc');
const attw = join(root, 'node_modules/@arethetypeswrong/cli/dist/index.js');
// This machine's npm config may name settings npm no longer knows; that warning is not sgq's.
const npmWarnings = (stderr: string) => stderr.split('\n').filter((l) => /npm warn/i.test(l) && !/Unknown (user|env) config/.test(l));

// One tarball for the whole file: two packs at once would strip and restore one package.json
// under each other (scripts/pack-manifest.mjs).
let tarball: string;
let shipped: string[];
let project: string;
let install: { stderr: string };

// The library as docs/library.md shows it: a client, records and pages iterated, toArray with a cap,
// the sandbox on a port and in-process. The same text serves the three module kinds.
// The methods of every route of sgq's table: a route the client type lacks fails the typecheck.
const EVERY_ROUTE = ROUTES.map((r) => (r.namespace ? `sgq.${r.namespace}.${methodName(r.verb)}` : 'sgq.info')).join(', ');
const USER_FILE = `
import { createClient, parseJson, stringifyJson, LosslessNumber, SgqError, type FollowerRecord, type SgqHooks, type SgqPage, type SgqRecord, type ToArrayCap } from 'sgq';
import { startSandbox, type Sandbox } from 'sgq/sandbox';

async function main(): Promise<string> {
  const box: Sandbox = await startSandbox({ port: 0 });
  let answers = 0;
  const hooks: SgqHooks = { response: (e) => void (answers += e.status === 200 && typeof e.ms === 'number' ? 1 : 0) };
  const sgq = createClient({ baseUrl: box.url, apiKey: box.apiKey, timeout: 5000, hooks });
  try {
    const names: string[] = [];
    let ids = 0;
    for await (const f of sgq.graph.followers('typed_1200', { limit: 600 })) {
      // Both shapes are typed: the service's prefixed fields and the spec's plain ones.
      names.push(f.follower_username ?? f.username ?? '');
      const id: number | bigint | undefined = f.follower_userid;
      const bio: string | null | undefined = f.follower_bio;
      // @ts-expect-error an id is a number or a bigint, never a string
      const wrong: string | undefined = f.follower_userid;
      const other: unknown = f.anything_else;
      void [bio, wrong, other];
      if (id !== undefined) ids++;
    }
    for await (const g of sgq.graph.following('typed_7')) {
      const name: string | undefined = g.username;
      // @ts-expect-error following records are not prefixed: this field is a JSON value, not a string
      const prefixed: string | undefined = g.follower_username;
      void [name, prefixed];
    }
    for await (const r of sgq.alpha.scoreHistory('typed_7', { limit: 1 })) {
      const score: number | LosslessNumber | undefined = r.score;
      const date: string | undefined = r.date;
      void [score, date];
    }
    // The metadata routes without pages: typed records, ids past 2^53 as BigInts.
    for await (const m of sgq.metadata.latest('typed_7')) {
      const followersNow: number | bigint | undefined = m.num_followers;
      const bio: string | null | undefined = m.bio;
      // @ts-expect-error metadata records are not prefixed
      const prefixed: string | undefined = m.follower_bio;
      void [followersNow, bio, prefixed];
    }
    const [count] = await sgq.metadata.followerCount('typed_7').toArray({ all: true });
    const counted: number | bigint | undefined = count?.num_followers;
    const [past] = await sgq.metadata.pastUsernames('typed_7').toArray({ limit: 1 });
    const handle: string | undefined = past?.username;
    const [label] = await sgq.alpha.classification('typed_7').toArray({ all: true });
    const classification: string | undefined = label?.classification;
    void [counted, handle, classification];
    // Every route of the table is a method (the list is written from sgq's route table).
    const everyRoute: unknown[] = [${EVERY_ROUTE}];
    const followers: FollowerRecord[] = await sgq.graph.followers('typed_1200').toArray({ limit: 2 });
    const written: string = followers.map((r) => stringifyJson(r)).join('\\n');
    const lossless = stringifyJson(parseJson('[1.0,-0,1E400,12345678901234567890,0.12345678901234567890123]'));
    const pages: [number | null, number][] = [];
    for await (const page of sgq.graph.following('typed_700').pages()) pages.push([(page satisfies SgqPage).page, page.records.length]);
    const cap: ToArrayCap = { maxPages: 1 };
    const capped: SgqRecord[] = await sgq.graph.followers('typed_1200').toArray(cap);
    const every = await sgq.metadata.userid('jack').toArray({ all: true });
    // @ts-expect-error toArray takes a cap: the compiler rejects a call without one (and were
    // sgq's types not found, or any, this directive would be unused: an error too)
    const uncapped: unknown = await sgq.graph.followers('typed_1200').toArray().catch((e: unknown) => e);
    let kind = '';
    try {
      await sgq.graph.followers('nobody').toArray({ limit: 10 });
    } catch (e) {
      if (e instanceof SgqError) kind = \`\${e.kind} \${e.exitCode}\`;
    }
    // Not closed: an in-process sandbox must not keep the script alive.
    const inProcess = await createClient({ sandbox: true }).graph.following('typed_7').toArray({ limit: 100 });
    return JSON.stringify({ routes: everyRoute.length, names: names.length, ids, answers: answers > 0, written: written.split('\\n').length, lossless, pages, capped: capped.length, every: every.length, uncapped: uncapped instanceof TypeError, kind, inProcess: inProcess.length });
  } finally {
    await sgq.close();
    await box.close();
  }
}

main().then((out) => console.log(out), (error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
`;
const EXPECTED = { routes: ROUTES.length, names: 600, ids: 600, answers: true, written: 2, lossless: '[1.0,-0,1E400,12345678901234567890,0.12345678901234567890123]', pages: [[1, 500], [2, 200]], capped: 500, every: 1, uncapped: true, kind: 'service 4', inProcess: 7 };
const USER_FILES = ['use-esm.mts', 'use-cjs.cts', 'use.ts'];

// Each resolution as a user's tsconfig sets it; @types/node comes from this checkout.
const RESOLUTIONS = {
  node16: { module: 'node16', moduleResolution: 'node16' },
  nodenext: { module: 'nodenext', moduleResolution: 'nodenext' },
  bundler: { module: 'preserve', moduleResolution: 'bundler' },
} as const;

function writeTsconfig(name: string, options: Record<string, unknown>): string {
  const file = join(project, `tsconfig.${name}.json`);
  const compilerOptions = { strict: true, target: 'ES2022', lib: ['ES2022'], types: ['node'], typeRoots: [join(root, 'node_modules/@types')], ...options };
  writeFileSync(file, JSON.stringify({ compilerOptions, files: USER_FILES }, null, 2));
  return file;
}

const runTsc = (args: string[]) => execa(process.execPath, [tsc, ...args], { cwd: project, reject: false, timeout: 90_000 });

beforeAll(async () => {
  const packDir = tempDir('sgq-pack-');
  // With npm's scripts on, as a publish runs them (prepack strips the manifest); SGQ_BUILD=skip
  // keeps prepare from rebuilding the dist/ that other tests are running.
  const pack = await execa('npm', ['pack', '--json', '--pack-destination', packDir], { cwd: root, env: { SGQ_BUILD: 'skip' } });
  const [info] = JSON.parse(pack.stdout.slice(pack.stdout.indexOf('['))) as [{ filename: string; files: { path: string }[] }];
  tarball = join(packDir, info.filename);
  shipped = info.files.map((f) => f.path).sort();

  // A user's fresh TypeScript project with the tarball installed offline.
  project = tempDir('sgq-types-project-');
  // No "type": .ts files are CommonJS under node16, as in a project npm init made.
  writeFileSync(join(project, 'package.json'), '{"name":"uses-sgq","version":"1.0.0","private":true}\n');
  install = await execa('npm', ['install', '--offline', '--no-audit', '--no-fund', tarball], { cwd: project, timeout: 90_000 });
  for (const file of USER_FILES) writeFileSync(join(project, file), USER_FILE);
}, 180_000);

/** The ```ts blocks of docs/library.md ("Use from Node"), each a module of its own. */
function libraryExamples(): string[] {
  const page = readFileSync(join(root, 'docs/library.md'), 'utf8');
  return [...page.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => `${m[1]}\nexport {};\n`);
}

describe('npm pack', () => {
  it('ships only what users need, with a manifest that names no build scripts', async () => {
    for (const path of shipped) expect(path).toMatch(/^(bin\/sgq\.cjs|dist\/.+\.(cjs|mjs|d\.[cm]ts|txt)|dist\/vendor\/build\/jq\.wasm|completions\/(sgq\.bash|_sgq|sgq\.fish)|docs\/[\w-]+\.md|README\.md|LICENSE|package\.json)$/);
    for (const needed of ['bin/sgq.cjs', 'dist/cli.cjs', 'dist/vendor/undici.cjs', 'dist/vendor/build/jq.wasm', 'dist/lib/index.cjs', 'dist/lib/index.mjs', 'dist/types/lib.d.mts', 'dist/types/lib.d.cts', 'dist/types/sandbox/index.d.mts', 'dist/types/sandbox/index.d.cts', 'dist/THIRD-PARTY-LICENSES.txt', 'completions/sgq.bash', 'README.md', 'docs/README.md', 'docs/commands.md', 'docs/dataset.md', 'LICENSE']) {
      expect(shipped).toContain(needed);
    }
    const manifest = (await execa('tar', ['-xzOf', tarball, 'package/package.json'])).stdout;
    expect(JSON.parse(manifest)).not.toHaveProperty('scripts');
    // The clone's own manifest is back as it was.
    expect(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts.prepare).toBeDefined();
  });

  it('installs globally into a working `sgq`', async () => {
    const prefix = tempDir('sgq-prefix-');
    const install = await execa('npm', ['install', '--global', '--prefix', prefix, '--offline', '--no-audit', '--no-fund', tarball]);
    expect(npmWarnings(install.stderr)).toEqual([]);
    // Everything is bundled: the install brings no node_modules of its own.
    expect(readdirSync(join(prefix, 'lib', 'node_modules', 'sgq'))).not.toContain('node_modules');

    const elsewhere = tempDir('sgq-cwd-');
    const env = { PATH: `${join(prefix, 'bin')}:${process.env.PATH}`, SGQ_CONFIG_DIR: tempDir() };
    const version = await execa('sgq', ['--version'], { cwd: elsewhere, env });
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+$/);
    const run = await execa('sgq', ['--sandbox', 'graph', 'followers', 'jack', '--limit', '2'], { cwd: elsewhere, env });
    expect(run.stdout.split('\n')).toHaveLength(2);
  }, 120_000);

});

// The packed tarball as a user's fresh project meets it: installed offline, one typed user
// file in each module kind (.mts, .cts, .ts) checked by `tsc --strict` under node16, nodenext
// and bundler resolution, then compiled and run by node against sgq/sandbox. attw checks the
// same tarball under node10, node16 (from CommonJS and from ESM) and bundler.
describe('the packed tarball in a fresh TypeScript project', () => {
  it('installs offline with nothing beside it: every dependency is bundled', () => {
    expect(npmWarnings(install.stderr)).toEqual([]);
    expect(readdirSync(join(project, 'node_modules')).filter((n) => !n.startsWith('.'))).toEqual(['sgq']);
    expect(readdirSync(join(project, 'node_modules/sgq'))).not.toContain('node_modules');
  });

  it.each(Object.keys(RESOLUTIONS) as (keyof typeof RESOLUTIONS)[])('typechecks .mts, .cts and .ts under tsc --strict with %s resolution', async (name) => {
    const config = writeTsconfig(name, { ...RESOLUTIONS[name], noEmit: true });
    const run = await runTsc(['-p', config, '--listFiles']);
    const listed = run.stdout.split('\n');
    expect(listed.filter((l) => /error TS/.test(l)).join('\n') + run.stderr).toBe('');
    expect(run.exitCode).toBe(0);
    // The declarations each kind of file was given: require gets the CommonJS ones.
    const sgqTypes = listed.filter((l) => l.includes('node_modules/sgq/')).map((l) => l.slice(l.indexOf('node_modules/sgq/') + 'node_modules/sgq/'.length));
    const expected = name === 'bundler' ? ['dist/types/lib.d.mts', 'dist/types/sandbox/index.d.mts'] : ['dist/types/lib.d.cts', 'dist/types/lib.d.mts', 'dist/types/sandbox/index.d.cts', 'dist/types/sandbox/index.d.mts'];
    for (const file of expected) expect(sgqTypes).toContain(file);
    expect(sgqTypes.every((f) => /\.d\.[cm]ts$/.test(f))).toBe(true);
  }, 120_000);

  it('compiles every example of docs/library.md ("Use from Node") under tsc --strict', async () => {
    const examples = libraryExamples();
    expect(examples.length).toBeGreaterThanOrEqual(4);
    const files = examples.map((text, i) => {
      writeFileSync(join(project, `readme-${i}.mts`), text);
      return `readme-${i}.mts`;
    });
    const file = join(project, 'tsconfig.readme.json');
    const compilerOptions = { strict: true, target: 'ES2022', lib: ['ES2022'], types: ['node'], typeRoots: [join(root, 'node_modules/@types')], module: 'nodenext', moduleResolution: 'nodenext', noEmit: true };
    writeFileSync(file, JSON.stringify({ compilerOptions, files }, null, 2));
    const run = await runTsc(['-p', file]);
    expect(run.stdout + run.stderr).toBe('');
    expect(run.exitCode).toBe(0);
  }, 120_000);

  it('runs the same files compiled to .mjs, .cjs and .js with node against sgq/sandbox', async () => {
    const config = writeTsconfig('emit', { ...RESOLUTIONS.node16, outDir: 'out' });
    const emit = await runTsc(['-p', config]);
    expect(emit.stdout + emit.stderr).toBe('');
    expect(readdirSync(join(project, 'out')).sort()).toEqual(['use-cjs.cjs', 'use-esm.mjs', 'use.js']);
    const env = { SGQ_CONFIG_DIR: tempDir() };
    for (const file of ['use-esm.mjs', 'use-cjs.cjs', 'use.js']) {
      const run = await execa(process.execPath, [join('out', file)], { cwd: project, env, timeout: 60_000 });
      expect(JSON.parse(run.stdout), file).toEqual(EXPECTED);
    }
  }, 120_000);

  it('is clean under attw: no resolution problem for sgq and sgq/sandbox', async () => {
    const run = await execa(process.execPath, [attw, '--format', 'json', '--no-definitely-typed', tarball], { reject: false, timeout: 60_000 });
    const { analysis } = JSON.parse(run.stdout) as { analysis: { problems: unknown[]; entrypoints: Record<string, unknown> } };
    expect(analysis.problems).toEqual([]);
    expect(Object.keys(analysis.entrypoints).sort()).toEqual(['.', './package.json', './sandbox']);
    expect(run.exitCode).toBe(0);
  }, 60_000);
});
