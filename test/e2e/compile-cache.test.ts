import { execa } from 'execa';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN } from '../helpers/e2e.js';
import { tempDir } from '../helpers/run.js';

// Node's compile cache, which bin/sgq.cjs turns on (Node 22.1 and later) in sgq's cache folder,
// code/, a folder only its owner may write: a compile cache is code Node runs. It can make a
// run faster, never make it fail or say anything.

const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
const nodeHasIt = major > 22 || (major === 22 && minor >= 1);

/** The built sgq, with `cache` as XDG_CACHE_HOME, under umask 022, and no compile cache of the caller's. */
function sgqWith(cache: string, args: string[], env: Record<string, string | undefined> = {}) {
  return execa('sh', ['-c', 'umask 022; exec "$0" "$@"', process.execPath, BIN, ...args], {
    reject: false,
    stdin: 'ignore',
    env: { SGQ_CONFIG_DIR: tempDir(), XDG_CACHE_HOME: cache, NODE_COMPILE_CACHE: undefined, NODE_DISABLE_COMPILE_CACHE: undefined, NO_COLOR: '', ...env },
    extendEnv: true,
    timeout: 30_000,
  });
}

/** Every file under `dir`, as paths below it. */
const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)).map((f) => `${e.name}/${f}`) : [e.name]));

describe("Node's compile cache", () => {
  it.runIf(nodeHasIt)('is kept in sgq/code of the cache folder, a folder made 0700, and read by the next run', async () => {
    const cache = tempDir();
    const first = await sgqWith(cache, ['--help']);
    expect([first.exitCode, first.stderr]).toEqual([0, '']);
    const code = join(cache, 'sgq', 'code');
    expect(statSync(code).mode & 0o777).toBe(0o700);
    expect(statSync(join(cache, 'sgq')).mode & 0o777).toBe(0o700);
    const files = filesUnder(code);
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) expect(statSync(join(code, file)).mode & 0o077, file).toBe(0);
    const second = await sgqWith(cache, ['--help']);
    expect([second.exitCode, second.stdout, second.stderr]).toEqual([0, first.stdout, '']);
  });

  it.skipIf(nodeHasIt)(`is not turned on by Node ${process.versions.node}, which has none: no code/ folder`, async () => {
    const cache = tempDir();
    expect((await sgqWith(cache, ['--help'])).exitCode).toBe(0);
    expect(existsSync(join(cache, 'sgq', 'code'))).toBe(false);
  });

  it('is off with NODE_DISABLE_COMPILE_CACHE, and in NODE_COMPILE_CACHE when that names a folder', async () => {
    const cache = tempDir();
    expect((await sgqWith(cache, ['--help'], { NODE_DISABLE_COMPILE_CACHE: '1' })).exitCode).toBe(0);
    expect(existsSync(join(cache, 'sgq', 'code'))).toBe(false);
    const own = join(tempDir(), 'node-cache');
    expect((await sgqWith(cache, ['--help'], { NODE_COMPILE_CACHE: own })).exitCode).toBe(0);
    expect(existsSync(join(cache, 'sgq', 'code'))).toBe(false);
    if (nodeHasIt) expect(filesUnder(own).length).toBeGreaterThan(0);
  });

  it('cannot make a run fail: a cache folder that cannot be made changes nothing, exit codes included', async () => {
    const notADir = join(tempDir(), 'file');
    writeFileSync(notADir, 'not a folder');
    const ok = await sgqWith(notADir, ['--help']);
    expect([ok.exitCode, ok.stderr]).toEqual([0, '']);
    expect(ok.stdout).toContain('Usage: sgq');
    const usage = await sgqWith(notADir, ['graph', 'nope']);
    expect(usage.exitCode).toBe(2);
    expect(usage.stderr.trim().split('\n')).toHaveLength(1);
    const usageCached = await sgqWith(tempDir(), ['graph', 'nope']);
    expect([usageCached.exitCode, usageCached.stderr]).toEqual([2, usage.stderr]);
  });
});
