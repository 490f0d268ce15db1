import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEY, startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { serviceOf } from '../../src/core/service.js';
import { CLOCK } from '../helpers/sandbox.js';
import { runSgq, tempDir } from '../helpers/run.js';

// What one run keeps (marks, snapshots, the cache, the users left) belongs to one service and
// one profile: a --sandbox run, a script pointed at `sgq sandbox`, or a profile pointed at
// another service never reads or moves what a run against the first one kept (issue 32).
// "Real" services are sandboxes that do not say they are one (announce: false).

let real: Sandbox;
let other: Sandbox;
let announced: Sandbox;

beforeAll(async () => {
  [real, other, announced] = await Promise.all([
    startSandbox({ clock: () => CLOCK, ttlMs: 120_000, announce: false }),
    startSandbox({ clock: () => CLOCK, ttlMs: 120_000, announce: false }),
    startSandbox({ clock: () => CLOCK, ttlMs: 120_000 }),
  ]);
});
afterAll(async () => {
  await Promise.all([real.close(), other.close(), announced.close()]);
});

/** A home of one user: its config folder, and the environment of a run against `to`. */
function home() {
  const dir = tempDir('sgq-home-');
  const base = { SGQ_CONFIG_DIR: join(dir, 'config'), XDG_DATA_HOME: join(dir, 'data'), XDG_CACHE_HOME: join(dir, 'cache'), HOME: dir, SGQ_API_KEY: DEMO_KEY };
  return { dir, env: (to?: Sandbox, extra: Record<string, string> = {}) => ({ ...base, ...(to ? { SGQ_BASE_URL: to.url } : {}), ...extra }) };
}

const sinceSent = (stderr: string): string | undefined => /"since":"([^"]+)"/.exec(stderr)?.[1];
const NIGHTLY = ['graph', 'followers', 'jack', '--all', '--since-last', '-o', 'ndjson', '--quiet'];

describe('across runs: each service keeps its own state', () => {
  it('the --since-last mark of the real service survives a --sandbox run, a run against `sgq sandbox`, and another service', async () => {
    const h = home();
    expect((await runSgq(NIGHTLY, { env: h.env(real) })).code).toBe(0);
    const mark = sinceSent((await runSgq([...NIGHTLY, '--dry-run'], { env: h.env(real) })).stderr);
    expect(mark).toBeDefined();
    // The sandbox, in process and as a server found by its header, and another service: none sees that mark.
    for (const run of [['--sandbox'], []] as const) {
      const env = run.length ? h.env(real) : h.env(announced);
      expect(sinceSent((await runSgq([...run, ...NIGHTLY, '--dry-run'], { env })).stderr)).toBeUndefined();
    }
    expect(sinceSent((await runSgq([...NIGHTLY, '--dry-run'], { env: h.env(other) })).stderr)).toBeUndefined();
    await runSgq(['--sandbox', ...NIGHTLY], { env: h.env(real) });
    await runSgq(NIGHTLY, { env: h.env(other) });
    // All sandboxes are one service: the mark of the --sandbox run is the one `sgq sandbox` gets.
    const sandboxMark = sinceSent((await runSgq([...NIGHTLY, '--dry-run'], { env: h.env(announced) })).stderr);
    expect(sandboxMark).toBeDefined();
    expect(sandboxMark).not.toBe(mark);
    // The nightly run against the real service sends its own mark, as if the others had never run.
    expect(sinceSent((await runSgq([...NIGHTLY, '--dry-run'], { env: h.env(real) })).stderr)).toBe(mark);
    // A trailing / or /api is the same service.
    expect(sinceSent((await runSgq([...NIGHTLY, '--dry-run'], { env: h.env(real, { SGQ_BASE_URL: `${real.url}/api/` }) })).stderr)).toBe(mark);
  });

  it('snapshots: a --sandbox run neither writes into the profile snapshot-dir nor sees the real snapshots', async () => {
    const h = home();
    const profileDir = join(h.dir, 'profile-snapshots');
    expect((await runSgq(['config', 'set', 'snapshot-dir', profileDir], { env: h.env() })).code).toBe(0);
    const snap = ['graph', 'followers', 'jack', '--all', '--snapshot', '-o', 'ndjson', '--quiet'];
    expect((await runSgq(snap, { env: h.env(real) })).code).toBe(0);
    expect((await runSgq(['--sandbox', ...snap], { env: h.env(real) })).code).toBe(0);
    const list = async (run: string[], env: Record<string, string>) => JSON.parse((await runSgq([...run, 'snapshots', 'list', '-o', 'json'], { env })).stdout || '[]') as { file: string }[];
    const realList = await list([], h.env(real));
    expect(realList).toHaveLength(1);
    expect(realList[0]!.file.startsWith(profileDir)).toBe(true);
    // The sandbox's went to the default store, under the sandbox's own folder.
    const sandboxList = await list(['--sandbox'], h.env(real));
    expect(sandboxList).toHaveLength(1);
    expect(sandboxList[0]!.file.startsWith(join(h.dir, 'data', 'sgq', 'snapshots', '@sandbox'))).toBe(true);
    // Another service behind the same profile starts its own history.
    expect(await list([], h.env(other))).toHaveLength(0);
    // SGQ_SNAPSHOT_DIR names a folder on purpose: a --sandbox run uses it, keyed as the sandbox's.
    const named = join(h.dir, 'named');
    await runSgq(['--sandbox', ...snap], { env: h.env(real, { SGQ_SNAPSHOT_DIR: named }) });
    expect(readdirSync(named)).toEqual(['@sandbox']);
  });

  it('the answers cache: another service behind the profile is asked, not answered from the first one', async () => {
    const h = home();
    const once = ['graph', 'followers', 'jack', '--cache', '1h', '-o', 'ndjson', '--quiet'];
    const calls = (s: Sandbox) => s.calls.get('graph/get_followers') ?? 0;
    const [r0, o0] = [calls(real), calls(other)];
    const first = await runSgq(once, { env: h.env(real) });
    const again = await runSgq(once, { env: h.env(real) });
    expect(again.stdout).toBe(first.stdout);
    expect(calls(real) - r0).toBe(1);
    await runSgq(once, { env: h.env(other) });
    expect(calls(other) - o0).toBe(1);
  });

  it('the users left by a --sandbox run go to a list of their own', async () => {
    const h = home();
    const stop = ['graph', 'followers', 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', '--max-credits', '3', '--concurrency', '1', '-o', 'ndjson'];
    const realRun = await runSgq(stop, { env: h.env(real) });
    const sandboxRun = await runSgq(['--sandbox', ...stop], { env: h.env(real) });
    const fileOf = (stderr: string) => /< (\S+\.txt)/.exec(stderr)?.[1];
    const [realFile, sandboxFile] = [fileOf(realRun.stderr), fileOf(sandboxRun.stderr)];
    expect(realFile, realRun.stderr).toBeDefined();
    expect(sandboxFile, sandboxRun.stderr).toBeDefined();
    expect(sandboxFile).not.toBe(realFile);
    expect(existsSync(realFile!)).toBe(true);
  });
});

describe('across runs: a sandbox found by its answers', () => {
  it('a run that keeps state, told it is not a sandbox (an address not asked), stops at the first answer that says it is', async () => {
    const h = home();
    // 0.0.0.0 reaches the loopback sandbox, but is not a loopback address sgq asks.
    const unasked = announced.url.replace('127.0.0.1', '0.0.0.0');
    const r = await runSgq(NIGHTLY, { env: h.env(announced, { SGQ_BASE_URL: unasked }) });
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`${unasked} answered as sgq's sandbox (header x-sgq-service), but this run keeps the state of http://0.0.0.0:`);
    expect(existsSync(join(h.dir, 'config', 'since-marks.json')) && Object.keys(JSON.parse(readFileSync(join(h.dir, 'config', 'since-marks.json'), 'utf8')).services ?? {}).length).toBeFalsy();
  });

  it('a run that keeps nothing is not asked, and works against `sgq sandbox` as before', async () => {
    const h = home();
    const r = await runSgq(['graph', 'followers', 'jack', '-o', 'ndjson'], { env: h.env(announced) });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split('\n').filter(Boolean).length).toBeGreaterThan(0);
  });
});

describe('across runs: the state of sgq 3.x is adopted once', () => {
  it('the first nightly run after the upgrade sends the same since and continues the same snapshots', async () => {
    const h = home();
    const config = join(h.dir, 'config');
    mkdirSync(config, { recursive: true });
    const mark = '2026-10-31T03:00:00.000000+00:00';
    writeFileSync(join(config, 'since-marks.json'), JSON.stringify({ marks: { 'default graph/get_followers username jack': mark } }));
    // A 3.x snapshot store: the profile's folder straight under the root.
    const root = join(h.dir, 'data', 'sgq', 'snapshots');
    const snap = ['graph', 'followers', 'jack', '--all', '--snapshot', '-o', 'ndjson', '--quiet'];
    expect((await runSgq(snap, { env: h.env(real) })).code).toBe(0);
    const keyed = join(root, `@${encodeURIComponent(serviceOf(real.url))}`);
    renameSync(join(keyed, 'default'), join(root, 'default'));
    rmdirSync(keyed);
    // A --sandbox run first takes nothing.
    expect(sinceSent((await runSgq(['--sandbox', ...NIGHTLY, '--dry-run'], { env: h.env(real) })).stderr)).toBeUndefined();
    expect(JSON.parse((await runSgq(['--sandbox', 'snapshots', 'list', '-o', 'json'], { env: h.env(real) })).stdout || '[]')).toHaveLength(0);
    // The nightly run: the same since as before, and its snapshot follows the old one.
    expect(sinceSent((await runSgq([...NIGHTLY, '--dry-run'], { env: h.env(real) })).stderr)).toBe(mark);
    const changes = await runSgq([...snap, '--changes'], { env: h.env(real) });
    expect(changes.code, changes.stderr).toBe(0);
    expect(changes.stdout).toBe('');
    expect(JSON.parse((await runSgq(['snapshots', 'list', '-o', 'json'], { env: h.env(real) })).stdout)).toHaveLength(2);
    expect(existsSync(join(root, 'default'))).toBe(false);
    // The nightly export itself moves the adopted mark on, under the service; the flat marks are gone.
    const nightly = await runSgq(NIGHTLY, { env: h.env(real) });
    expect(nightly.code, nightly.stderr).toBe(0);
    const marks = JSON.parse(readFileSync(join(config, 'since-marks.json'), 'utf8')) as { services: Record<string, Record<string, string>>; marks?: unknown };
    expect(Object.keys(marks.services[serviceOf(real.url)]!)).toEqual(['default graph/get_followers username jack']);
    expect(marks.services[serviceOf(real.url)]!['default graph/get_followers username jack']! > mark).toBe(true);
    expect(marks.marks).toBeUndefined();
  });
});
