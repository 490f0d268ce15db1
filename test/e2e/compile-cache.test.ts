import { execa } from 'execa';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, sgq } from '../helpers/e2e.js';
import { tempDir } from '../helpers/run.js';

// The CLI's compiled code, kept in sgq's cache folder, code/, a folder only its owner may write
// (a compile cache is code Node runs): Node's own compile cache on Node 22.1 and later, sgq's
// on Node 20 (src/cli/start/code-cache.ts). It can make a run faster, never make it fail or say
// anything. The runs here load the CLI (`describe --json`): help into a pipe is a file
// (src/cli/start/prerendered-help.ts).

const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
const nodeHasIt = major > 22 || (major === 22 && minor >= 1);
/** A line that loads the CLI and needs no service. */
const LOADS_CLI = ['describe', '--json'];

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
  it('compiles a bundle of ASCII only, which Node 20 reads as latin1 (no UTF-8 decoding): esbuild escapes the rest (scripts/build.mjs)', () => {
    const bundle = readFileSync(join(dirname(BIN), '..', 'dist', 'cli.cjs'));
    expect(bundle.findIndex((byte) => byte > 0x7f)).toBe(-1);
  });

  it('is kept in sgq/code of the cache folder, a folder made 0700, and read by the next run', async () => {
    const cache = tempDir();
    const first = await sgqWith(cache, LOADS_CLI);
    expect([first.exitCode, first.stderr]).toEqual([0, '']);
    const code = join(cache, 'sgq', 'code');
    expect(statSync(code).mode & 0o777).toBe(0o700);
    expect(statSync(join(cache, 'sgq')).mode & 0o777).toBe(0o700);
    const files = filesUnder(code);
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) expect(statSync(join(code, file)).mode & 0o077, file).toBe(0);
    const second = await sgqWith(cache, LOADS_CLI);
    expect([second.exitCode, second.stdout, second.stderr]).toEqual([0, first.stdout, '']);
  });

  it.skipIf(nodeHasIt)(`on Node ${process.versions.node}, is sgq's: an entry per kind of run, not written again by the next run of its kind`, async () => {
    const cache = tempDir();
    const code = join(cache, 'sgq', 'code', `${process.version}-${process.arch}`);
    expect((await sgqWith(cache, LOADS_CLI)).exitCode).toBe(0);
    expect((await sgqWith(cache, ['graph', 'nope'])).exitCode).toBe(2);
    const entries = readdirSync(code).sort();
    expect(entries.map((e) => e.replace(/^[0-9a-f]{8}-/, ''))).toEqual(['other-cli.cjs.v8', 'route-cli.cjs.v8']);
    const written = entries.map((e) => statSync(join(code, e)).ino);
    expect((await sgqWith(cache, LOADS_CLI)).exitCode).toBe(0);
    expect((await sgqWith(cache, ['graph', 'nope'])).exitCode).toBe(2);
    expect(readdirSync(code).sort().map((e) => statSync(join(code, e)).ino)).toEqual(written);
  });

  it.skipIf(nodeHasIt)(`on Node ${process.versions.node}, a damaged entry is not used: the run is the same and writes a sound one`, async () => {
    const cache = tempDir();
    const code = join(cache, 'sgq', 'code', `${process.version}-${process.arch}`);
    const sound = await sgqWith(cache, LOADS_CLI);
    const [entry] = readdirSync(code).map((e) => join(code, e));
    const bytes = readFileSync(entry!);
    // A block of the data overwritten, as a bad sector would leave it; then the data cut short.
    for (const damaged of [Buffer.concat([bytes.subarray(0, 2048), Buffer.alloc(512, 0xa5), bytes.subarray(2560)]), bytes.subarray(0, bytes.length >> 1)]) {
      writeFileSync(entry!, damaged);
      const run = await sgqWith(cache, LOADS_CLI);
      expect([run.exitCode, run.stdout, run.stderr]).toEqual([0, sound.stdout, '']);
      expect(readFileSync(entry!).equals(damaged)).toBe(false);
    }
  });

  it.skipIf(nodeHasIt)(`on Node ${process.versions.node}, a run that changes V8's flags (--jq) writes no entry: V8 would refuse it to the runs that do not`, async () => {
    const cache = tempDir();
    const code = join(cache, 'sgq', 'code', `${process.version}-${process.arch}`);
    const jq = await sgqWith(cache, ['graph', 'followers', 'jack', '--sandbox', '-q', '--jq', 'tojson | length']);
    expect([jq.exitCode, jq.stderr]).toEqual([0, '']);
    expect(existsSync(code) ? readdirSync(code) : []).toEqual([]);
    // The check itself works: the same line without --jq writes one.
    expect((await sgqWith(cache, ['graph', 'followers', 'jack', '--sandbox', '-q'])).exitCode).toBe(0);
    expect(readdirSync(code).map((e) => e.replace(/^[0-9a-f]{8}-/, ''))).toEqual(['route-cli.cjs.v8']);
  });

  it("is the suite's own in a test's run, not kept in the home folder of whoever runs the tests", async () => {
    // test/helpers/global-setup.ts: every run of the built sgq that names no cache folder of its own.
    const suite = process.env.XDG_CACHE_HOME;
    expect(suite?.startsWith(join(process.env.TMPDIR ?? '/nowhere', ''))).toBe(true);
    const run = await sgq(LOADS_CLI);
    expect([run.exitCode, run.stderr]).toEqual([0, '']);
    expect(filesUnder(join(suite!, 'sgq', 'code')).length).toBeGreaterThan(0);
  });

  it('is off with NODE_DISABLE_COMPILE_CACHE, and in NODE_COMPILE_CACHE when that names a folder', async () => {
    const cache = tempDir();
    expect((await sgqWith(cache, LOADS_CLI, { NODE_DISABLE_COMPILE_CACHE: '1' })).exitCode).toBe(0);
    expect(existsSync(join(cache, 'sgq', 'code'))).toBe(false);
    const own = join(tempDir(), 'node-cache');
    expect((await sgqWith(cache, LOADS_CLI, { NODE_COMPILE_CACHE: own })).exitCode).toBe(0);
    expect(existsSync(join(cache, 'sgq', 'code'))).toBe(false);
    if (nodeHasIt) expect(filesUnder(own).length).toBeGreaterThan(0);
  });

  it('cannot make a run fail: a cache folder that cannot be made changes nothing, exit codes included', async () => {
    const notADir = join(tempDir(), 'file');
    writeFileSync(notADir, 'not a folder');
    const ok = await sgqWith(notADir, LOADS_CLI);
    expect([ok.exitCode, ok.stderr]).toEqual([0, '']);
    expect(ok.stdout).toContain('"commands"');
    const usage = await sgqWith(notADir, ['graph', 'nope']);
    expect(usage.exitCode).toBe(2);
    expect(usage.stderr.trim().split('\n')).toHaveLength(1);
    const usageCached = await sgqWith(tempDir(), ['graph', 'nope']);
    expect([usageCached.exitCode, usageCached.stderr]).toEqual([2, usage.stderr]);
  });
});
