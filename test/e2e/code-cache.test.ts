import { execa } from 'execa';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/run.js';

// The code cache (src/cli/code-cache.ts) on a private copy of the built program, so that its
// bundles can be edited, and a private cache folder. Help runs are `sgq help …`: `--help` into
// a pipe is served from dist/help/ without loading the program at all.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const NODE_DIR = `${process.version}-${process.arch}`;

function copyOfSgq(): string {
  const app = tempDir('sgq-app-');
  for (const part of ['bin', 'dist', 'package.json']) cpSync(join(ROOT, part), join(app, part), { recursive: true });
  return app;
}

function sgqIn(app: string, cache: string, args: string[], env: Record<string, string | undefined> = {}, input?: string) {
  return execa(process.execPath, [join(app, 'bin/sgq.cjs'), ...args], {
    reject: false,
    ...(input === undefined ? { stdin: 'ignore' as const } : { input }),
    env: { SGQ_CONFIG_DIR: tempDir(), XDG_CACHE_HOME: cache, NODE_DISABLE_COMPILE_CACHE: undefined, NO_COLOR: '', ...env },
    extendEnv: true,
    timeout: 30_000,
  });
}

/** The cache files, by name, with the inode each has now (a rewrite is a rename: a new inode). */
function cacheFiles(cache: string): Map<string, number> {
  const dir = join(cache, 'sgq', 'code', NODE_DIR);
  if (!existsSync(dir)) return new Map();
  return new Map(readdirSync(dir).map((name) => [name, statSync(join(dir, name)).ino]));
}
const named = (files: Map<string, number>, part: string) => [...files.keys()].filter((name) => name.includes(part));

describe('the code cache', () => {
  it('is written by the first run and read, not rewritten, by the next', async () => {
    const [app, cache] = [copyOfSgq(), tempDir()];
    const first = await sgqIn(app, cache, ['help']);
    expect(first.exitCode).toBe(0);
    const written = cacheFiles(cache);
    expect(named(written, '-help-main.cjs.v8')).toHaveLength(1);
    const second = await sgqIn(app, cache, ['help']);
    expect(second.stdout).toBe(first.stdout);
    expect(second.stderr).toBe('');
    // V8 refusing the cache would have made the run write it again.
    expect(cacheFiles(cache)).toEqual(written);
  });

  it('keeps one file per kind of run: help, route commands, other commands', async () => {
    const [app, cache] = [copyOfSgq(), tempDir()];
    expect((await sgqIn(app, cache, ['help', 'graph', 'followers'])).exitCode).toBe(0);
    expect((await sgqIn(app, cache, ['graph', 'followers', 'jack', '--sandbox', '-q'])).exitCode).toBe(0);
    expect((await sgqIn(app, cache, ['config', 'path'])).exitCode).toBe(0);
    // A plain route line runs the route bundle (here it fails: nothing listens there).
    const plain = await sgqIn(app, cache, ['graph', 'followers', 'jack', '-q', '--base-url', 'http://127.0.0.1:1', '--retries', '0'], { SGQ_API_KEY: 'k' });
    expect(plain.stderr).toMatch(/^sgq: /);
    const files = cacheFiles(cache);
    // A --sandbox line runs the full route bundle (src/cli/route-left-out.ts).
    for (const name of ['-help-main.cjs.v8', '-route-route-full.cjs.v8', '-route-route-main.cjs.v8', '-other-main.cjs.v8']) expect(named(files, name)).toHaveLength(1);
    // Each is read by its own kind again.
    expect((await sgqIn(app, cache, ['graph', 'followers', 'jack', '--sandbox', '-q'])).exitCode).toBe(0);
    expect(cacheFiles(cache)).toEqual(files);
  });

  it('is read, not rewritten, by --jq runs, which set V8’s flags for jq before sgq loads and keep files of their own', async () => {
    const [app, cache] = [copyOfSgq(), tempDir()];
    // A filter only jq runs (not sgq's subset): jq's thread starts, and its flags are set, as the line is read.
    const jq = ['graph', 'followers', 'jack', '--sandbox', '-q', '--jq', 'tojson | length'];
    const plain = ['graph', 'followers', 'jack', '--sandbox', '-q'];
    const first = await sgqIn(app, cache, jq);
    expect([first.exitCode, first.stderr]).toEqual([0, '']);
    expect((await sgqIn(app, cache, plain)).exitCode).toBe(0);
    const files = cacheFiles(cache);
    for (const name of ['-route-jq-route-full.cjs.v8', '-route-route-full.cjs.v8']) expect(named(files, name)).toHaveLength(1);
    // Flags set by jq's thread while the bundle loaded made V8 refuse it in every --jq run, which wrote it again.
    const again = await sgqIn(app, cache, jq);
    expect(again.stdout).toBe(first.stdout);
    expect((await sgqIn(app, cache, plain)).exitCode).toBe(0);
    expect(cacheFiles(cache)).toEqual(files);
  });

  it('never serves the code of a bundle that changed, even at the same size and time', async () => {
    const [app, cache] = [copyOfSgq(), tempDir()];
    expect((await sgqIn(app, cache, ['help'])).stdout).toContain('Query the Social Graph');
    // The same length and the same mtime: only the inode's change time tells them apart
    // (V8 itself checks only the length of the source).
    const main = join(app, 'dist/main.cjs');
    const before = statSync(main);
    const text = readFileSync(main, 'utf8');
    expect(text).toContain('Query the Social Graph');
    writeFileSync(main, text.replace('Query the Social Graph', 'QUERY the Social Graph'));
    utimesSync(main, before.atime, before.mtime);
    expect(statSync(main).size).toBe(before.size);
    const after = await sgqIn(app, cache, ['help']);
    expect(after.exitCode).toBe(0);
    expect(after.stdout).toContain('QUERY the Social Graph');
  });

  it('recovers from a damaged file: the run works and writes it anew', async () => {
    const [app, cache] = [copyOfSgq(), tempDir()];
    const first = await sgqIn(app, cache, ['help']);
    const [name] = named(cacheFiles(cache), '-help-main.cjs.v8');
    const file = join(cache, 'sgq', 'code', NODE_DIR, name!);
    const data = readFileSync(file);
    const header = data.indexOf(10) + 1;
    // Keep the first line (it still names this bundle) and spoil what V8 reads, then cut it short.
    for (let i = header; i < data.length; i += 7) data[i] = (data[i]! + 1) & 0xff;
    writeFileSync(file, data.subarray(0, Math.floor(data.length * 0.6)));
    const damaged = cacheFiles(cache);
    const again = await sgqIn(app, cache, ['help']);
    expect(again.exitCode).toBe(0);
    expect(again.stdout).toBe(first.stdout);
    expect(again.stderr).toBe('');
    expect(cacheFiles(cache).get(name!)).not.toBe(damaged.get(name!));
    // …and the new file is good: the next run leaves it alone.
    const rewritten = cacheFiles(cache);
    await sgqIn(app, cache, ['help']);
    expect(cacheFiles(cache)).toEqual(rewritten);
  });

  it('cannot make a run fail: a cache folder that cannot be made changes nothing, exit codes included', async () => {
    const app = copyOfSgq();
    const notADir = join(tempDir(), 'file');
    writeFileSync(notADir, 'not a folder');
    const ok = await sgqIn(app, notADir, ['help']);
    expect(ok.exitCode).toBe(0);
    expect(ok.stderr).toBe('');
    const usage = await sgqIn(app, notADir, ['graph', 'nope']);
    expect(usage.exitCode).toBe(2);
    expect(usage.stderr.trim().split('\n')).toHaveLength(1);
    const usageCached = await sgqIn(app, tempDir(), ['graph', 'nope']);
    expect(usageCached.exitCode).toBe(2);
    expect(usageCached.stderr).toBe(usage.stderr);
  });

  it('lets files not written for 30 days go when it writes: other copies’, killed runs’ temporary files', async () => {
    const [app, cache] = [copyOfSgq(), tempDir()];
    const dir = join(cache, 'sgq', 'code', NODE_DIR);
    mkdirSync(dir, { recursive: true });
    const old = Date.now() / 1000 - 31 * 24 * 3600;
    for (const name of ['0badc0de-help-main.cjs.v8', '0badc0de-help-main.cjs.v8.4242.tmp']) {
      writeFileSync(join(dir, name), 'x');
      utimesSync(join(dir, name), old, old);
    }
    writeFileSync(join(dir, 'fresh-help-main.cjs.v8'), 'x');
    expect((await sgqIn(app, cache, ['help'])).exitCode).toBe(0);
    const names = readdirSync(dir);
    expect(names).toContain('fresh-help-main.cjs.v8');
    expect(names.filter((name) => name.startsWith('0badc0de'))).toEqual([]);
    expect(named(cacheFiles(cache), '-help-main.cjs.v8')).toHaveLength(2);
  });

  it('is off with NODE_DISABLE_COMPILE_CACHE, as Node’s own is', async () => {
    const [app, cache] = [copyOfSgq(), tempDir()];
    expect((await sgqIn(app, cache, ['help'], { NODE_DISABLE_COMPILE_CACHE: '1' })).exitCode).toBe(0);
    expect(existsSync(join(cache, 'sgq', 'code'))).toBe(false);
  });

  it('keeps two installs apart: neither replaces the other’s files', async () => {
    const [one, two, cache] = [copyOfSgq(), copyOfSgq(), tempDir()];
    await sgqIn(one, cache, ['help']);
    await sgqIn(two, cache, ['help']);
    const files = cacheFiles(cache);
    expect(named(files, '-help-main.cjs.v8')).toHaveLength(2);
    await sgqIn(one, cache, ['help']);
    await sgqIn(two, cache, ['help']);
    expect(cacheFiles(cache)).toEqual(files);
  });

  it('is not written by a run that changed V8’s flags (V8 would refuse it in the next run)', async () => {
    const [app, cache] = [copyOfSgq(), tempDir()];
    const dir = tempDir();
    writeFileSync(join(dir, 'old.ndjson'), '{"username":"a"}\n');
    writeFileSync(join(dir, 'new.ndjson'), '{"username":"b"}\n');
    // sgq diff lowers V8's young generation growth for its sort.
    const diff = await sgqIn(app, cache, ['diff', join(dir, 'old.ndjson'), join(dir, 'new.ndjson'), '-q']);
    expect(diff.exitCode).toBe(0);
    expect(named(cacheFiles(cache), '-other-')).toEqual([]);
    // Another command of the same kind writes it, and diff, reading it, leaves it alone.
    await sgqIn(app, cache, ['config', 'path']);
    const files = cacheFiles(cache);
    expect(named(files, '-other-main.cjs.v8')).toHaveLength(1);
    await sgqIn(app, cache, ['diff', join(dir, 'old.ndjson'), join(dir, 'new.ndjson'), '-q']);
    await sgqIn(app, cache, ['config', 'path']);
    expect(cacheFiles(cache)).toEqual(files);
  });

  it('keeps undici’s, compiled after a batch sets --liftoff-only, but not the bundle compiled before', async () => {
    const [app, cache] = [copyOfSgq(), tempDir()];
    const batch = () => sgqIn(app, cache, ['--sandbox', 'metadata', 'userid', '-', '-q'], {}, 'jack\ndorsey\n');
    const first = await batch();
    expect([first.exitCode, first.stderr]).toEqual([0, '']);
    const files = cacheFiles(cache);
    expect(named(files, '-route-vendor+undici.cjs.v8')).toHaveLength(1);
    // A --sandbox line runs the full route bundle (src/cli/route-left-out.ts).
    expect(named(files, '-route-full.cjs.v8')).toEqual([]);
    expect(named(files, '-route-main.cjs.v8')).toEqual([]);
    const again = await batch();
    expect(again.stdout).toBe(first.stdout);
    // Accepted under the same flag: not written again.
    expect(cacheFiles(cache)).toEqual(files);
  });

  it('is shared by runs at once: each works, and what they leave is whole', async () => {
    const [app, cache] = [copyOfSgq(), tempDir()];
    const runs = await Promise.all(Array.from({ length: 4 }, () => sgqIn(app, cache, ['help'])));
    for (const r of runs) expect([r.exitCode, r.stderr]).toEqual([0, '']);
    const dir = join(cache, 'sgq', 'code', NODE_DIR);
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    const files = cacheFiles(cache);
    await sgqIn(app, cache, ['help']);
    expect(cacheFiles(cache)).toEqual(files);
  });
});
