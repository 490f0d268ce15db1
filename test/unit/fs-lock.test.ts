import { execaSync } from 'execa';
import { existsSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ExitCode, SgqError } from '../../src/core/errors.js';
import { acquireLock } from '../../src/fs/lock.js';
import { tempDir } from '../helpers/run.js';

const deadPid = () => Number(execaSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout);

describe('file locks', () => {
  it('holds the pid, refuses a second holder with exit 8 naming it, and is gone on release', async () => {
    const target = join(tempDir(), 'f.ndjson');
    const lock = await acquireLock(target, { waitMs: 0, what: '--out f.ndjson' });
    expect(JSON.parse(readFileSync(`${target}.lock`, 'utf8'))).toMatchObject({ pid: process.pid, host: hostname() });
    const busy = await acquireLock(target, { waitMs: 0, what: '--out f.ndjson' }).catch((e: unknown) => e);
    expect(busy).toBeInstanceOf(SgqError);
    expect((busy as SgqError).exitCode).toBe(ExitCode.locked);
    expect((busy as SgqError).message).toContain(`pid ${process.pid}; lock ${target}.lock`);
    lock.release();
    expect(readdirSync(join(target, '..'))).toEqual([]);
  });

  it('takes over the lock of a dead pid and one it cannot read', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'a.lock'), JSON.stringify({ pid: deadPid(), host: hostname() }));
    writeFileSync(join(dir, 'b.lock'), '');
    (await acquireLock(join(dir, 'a'), { waitMs: 0, what: 'a' })).release();
    (await acquireLock(join(dir, 'b'), { waitMs: 0, what: 'b' })).release();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('waits with --wait-lock and gets it when the holder lets go', async () => {
    const target = join(tempDir(), 'state.json');
    const first = await acquireLock(target, { waitMs: 0, what: 'state' });
    let told = '';
    const second = acquireLock(target, { waitMs: 60_000, what: 'state', onWait: (line) => (told = line) });
    await expect.poll(() => told, { timeout: 10_000 }).toContain(`in use by pid ${process.pid}`);
    first.release();
    (await second).release();
    expect(existsSync(`${target}.lock`)).toBe(false);
  });

  it('never removes a lock that is no longer its own', async () => {
    const dir = tempDir();
    const target = join(dir, 'f');
    const lock = await acquireLock(target, { waitMs: 0, what: 'f' });
    // Another run's lock now stands under the name (as after a takeover).
    writeFileSync(join(dir, 'other'), JSON.stringify({ pid: process.pid, host: hostname() }));
    renameSync(join(dir, 'other'), `${target}.lock`);
    lock.release();
    expect(existsSync(`${target}.lock`)).toBe(true);
  });
});
