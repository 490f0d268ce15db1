import { execa } from 'execa';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/run.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
// This machine's npm config may name settings npm no longer knows; that warning is not sgq's.
const npmWarnings = (stderr: string) => stderr.split('\n').filter((l) => /npm warn/i.test(l) && !/Unknown (user|env) config/.test(l));

let tarball: string;
let shipped: string[];

beforeAll(async () => {
  const packDir = tempDir('sgq-pack-');
  // With npm's scripts on, as a publish runs them (prepack strips the manifest); SGQ_BUILD=skip
  // keeps prepare from rebuilding the dist/ that other tests are running.
  const pack = await execa('npm', ['pack', '--json', '--pack-destination', packDir], { cwd: root, env: { SGQ_BUILD: 'skip' } });
  const [info] = JSON.parse(pack.stdout.slice(pack.stdout.indexOf('['))) as [{ filename: string; files: { path: string }[] }];
  tarball = join(packDir, info.filename);
  shipped = info.files.map((f) => f.path).sort();
}, 120_000);

describe('npm pack', () => {
  it('ships only what users need, with a manifest that names no build scripts', async () => {
    for (const path of shipped) expect(path).toMatch(/^(bin\/sgq\.cjs|dist\/.+\.(cjs|mjs|d\.[cm]ts|txt)|completions\/(sgq\.bash|_sgq|sgq\.fish)|README\.md|LICENSE|package\.json)$/);
    for (const needed of ['bin/sgq.cjs', 'dist/cli.cjs', 'dist/main.cjs', 'dist/vendor/undici.cjs', 'dist/lib/index.cjs', 'dist/lib/index.mjs', 'dist/types/lib.d.mts', 'dist/types/lib.d.cts', 'dist/types/sandbox/index.d.mts', 'dist/types/sandbox/index.d.cts', 'dist/THIRD-PARTY-LICENSES.txt', 'dist/help/sgq.txt', 'dist/help/sgq+graph+followers.txt', 'completions/sgq.bash', 'README.md', 'LICENSE']) {
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

  it('is a library for ES modules, CommonJS and strict TypeScript', async () => {
    const project = tempDir('sgq-project-');
    writeFileSync(join(project, 'package.json'), '{"name":"uses-sgq","version":"1.0.0","private":true}\n');
    const install = await execa('npm', ['install', '--offline', '--no-audit', '--no-fund', tarball], { cwd: project });
    expect(npmWarnings(install.stderr)).toEqual([]);

    writeFileSync(join(project, 'esm.mjs'), `
import { createClient, SgqError } from 'sgq';
import { startSandbox, DEMO_KEY } from 'sgq/sandbox';
const box = await startSandbox();
const sgq = createClient({ baseUrl: box.url, apiKey: DEMO_KEY });
let n = 0;
for await (const f of sgq.graph.followers('esm_1200', { limit: 1000 })) n++;
try { await sgq.graph.followers('nobody').toArray(); } catch (e) { console.log(e instanceof SgqError, e.kind, e.exitCode); }
console.log(n);
await sgq.close();
await box.close();
`);
    // No close(): an in-process sandbox must not keep a script alive.
    writeFileSync(join(project, 'cjs.cjs'), `
const { createClient } = require('sgq');
(async () => {
  const sgq = createClient({ sandbox: true });
  const pages = [];
  for await (const p of sgq.graph.following('cjs_700').pages()) pages.push([p.page, p.records.length]);
  console.log(JSON.stringify(pages));
})();
`);
    writeFileSync(join(project, 'typed.ts'), `
import { createClient, SgqError, type SgqRecord, type SgqPage } from 'sgq';
import { startSandbox } from 'sgq/sandbox';
export async function main(): Promise<number> {
  const box = await startSandbox({ port: 0 });
  const sgq = createClient({ baseUrl: box.url, apiKey: box.apiKey, timeout: 5000 });
  const first: SgqRecord[] = await sgq.metadata.userid('jack').toArray();
  for await (const page of sgq.graph.followers('jack', { since: '7d', maxPages: 1 }).pages()) {
    const p: SgqPage = page;
    if (p.creditsLeft === null) return 1;
  }
  try { await sgq.info(); } catch (e) { if (e instanceof SgqError) return e.exitCode; }
  await box.close();
  return first.length;
}
`);
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { strict: true, noEmit: true, module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', types: ['node'], typeRoots: [join(root, 'node_modules/@types')] },
      files: ['typed.ts'],
    }));

    const env = { SGQ_CONFIG_DIR: tempDir() };
    const esm = await execa(process.execPath, ['esm.mjs'], { cwd: project, env });
    expect(esm.stdout.split('\n')).toEqual(['true service 4', '1000']);
    const cjs = await execa(process.execPath, ['cjs.cjs'], { cwd: project, env, timeout: 30_000 });
    expect(JSON.parse(cjs.stdout)).toEqual([[1, 500], [2, 200]]);
    const tsc = await execa(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', project], { cwd: project, reject: false });
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.exitCode).toBe(0);
  }, 120_000);
});
