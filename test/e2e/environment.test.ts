import { execa } from 'execa';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEMO_KEY } from '../../src/sandbox/server.js';
import { BIN, useSandboxProcess } from '../helpers/e2e.js';
import { tempDir } from '../helpers/run.js';

// Hostile environments, met by the built binary as cron or a container would run it: no
// HOME and a user id the system does not know, a config folder on a read-only filesystem.

const isRoot = process.getuid?.() === 0;
const sandbox = useSandboxProcess();

/** The line an `sgq` failure must be: one, in sgq's voice, never an internal error. */
function expectOneLine(stderr: string): string {
  const lines = stderr.trim().split('\n');
  expect(lines, stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^sgq: /);
  expect(lines[0]).not.toContain('internal error');
  return lines[0]!;
}

// A uid with no passwd entry and no HOME: os.homedir() throws there. Root can become one;
// the checkout and node must be readable by every user (a clone in a private folder is not).
const stranger = 54_321;
const strangerCanRun = isRoot && spawnSync(process.execPath, [BIN, '--version'], { env: {}, uid: stranger, gid: stranger, cwd: '/' }).status === 0;

describe.skipIf(!strangerCanRun)('no HOME, and a user the system does not know', () => {
  const run = (args: string[], env: Record<string, string> = {}) =>
    execa(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env }, extendEnv: false, uid: stranger, gid: stranger, cwd: '/', reject: false, timeout: 60_000 });

  it('runs Node.js and has no home folder (the premise of the test)', () => {
    const probe = spawnSync(process.execPath, ['-e', 'try { require("os").homedir(); console.log("home") } catch { console.log("no home") }'], { env: {}, uid: stranger, gid: stranger, encoding: 'utf8' });
    expect(probe.stdout.trim()).toBe('no home');
  });

  it('runs with everything from the environment', async () => {
    const r = await run(['-q', 'graph', 'followers', 'jack', '--limit', '3'], { SGQ_BASE_URL: sandbox.url, SGQ_API_KEY: DEMO_KEY });
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    expect(r.stdout.trim().split('\n')).toHaveLength(3);
  });

  it('runs --sandbox', async () => {
    const r = await run(['--sandbox', 'info']);
    expect(r.exitCode).toBe(0);
  });

  it('config set and config path say where the config could go instead (exit 3)', async () => {
    for (const args of [['config', 'set', 'output', 'csv'], ['config', 'path']]) {
      const r = await run(args);
      expect(r.exitCode).toBe(3);
      expect(expectOneLine(r.stderr)).toContain('set HOME, or SGQ_CONFIG_DIR');
    }
  });
});

// Root ignores file modes, so a read-only folder is a read-only mount.
const mountable = isRoot && spawnSync('mount', ['--version'], { stdio: 'ignore' }).status === 0;

describe.skipIf(!mountable)('a config folder on a read-only filesystem', () => {
  const dir = join(tempDir(), 'ro');
  let mounted = false;
  afterAll(() => {
    if (mounted) spawnSync('umount', [dir]);
  });
  const run = (args: string[]) =>
    execa(process.execPath, [BIN, ...args], { env: { SGQ_CONFIG_DIR: dir, SGQ_BASE_URL: sandbox.url, NO_COLOR: '1' }, reject: false, timeout: 60_000 });

  it('reads its settings, and refuses to change them with exit 3', async (ctx) => {
    mkdirSync(dir);
    // A container without CAP_SYS_ADMIN cannot mount: then there is nothing to try.
    if (spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir]).status !== 0) ctx.skip();
    mounted = true;
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ profiles: { default: { 'api-key': DEMO_KEY, timeout: 30 } } }));
    expect(spawnSync('mount', ['-o', 'remount,ro', dir]).status).toBe(0);

    const read = await run(['-q', 'graph', 'followers', 'jack', '--limit', '1']);
    expect(read.stderr).toBe('');
    expect(read.exitCode).toBe(0);

    const set = await run(['config', 'set', 'output', 'csv']);
    expect(set.exitCode).toBe(3);
    expect(expectOneLine(set.stderr)).toContain(`cannot write the config file ${join(dir, 'config.json')}`);
  });
});
