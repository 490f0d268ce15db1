import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { acquireLock } from '../../src/fs/lock.js';
import { processStart } from '../../src/fs/owner.js';
import { tempDir } from '../helpers/run.js';

// Issue 37: a --snapshot batch takes a lock per user, and each recorded this process's start
// time read again from /proc/self/stat (1-2% of the nightly job's CPU). It is read once.

const reads = vi.hoisted(() => ({ ownStat: 0 }));

vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const readFileSync = ((path: Parameters<typeof fs.readFileSync>[0], ...rest: unknown[]) => {
    if (String(path) === `/proc/${process.pid}/stat`) reads.ownStat++;
    return (fs.readFileSync as (...args: unknown[]) => unknown)(path, ...rest);
  }) as typeof fs.readFileSync;
  return { ...fs, readFileSync, default: { ...fs, readFileSync } };
});

describe('the locks of one process', () => {
  it('record its start time, read once however many locks it takes', async () => {
    const dir = tempDir('sgq-owner-');
    const before = reads.ownStat;
    for (let i = 0; i < 5; i++) {
      const target = join(dir, `u${i}`);
      const lock = await acquireLock(target, { waitMs: 0, what: `user ${i}` });
      const held = JSON.parse(readFileSync(`${target}.lock`, 'utf8')) as { pid: number; start?: string };
      expect(held.pid).toBe(process.pid);
      if (process.platform === 'linux') expect(held.start).toBe(processStart(process.pid));
      lock.release();
    }
    // The checks above read it for themselves: the five locks, once at most.
    const checks = process.platform === 'linux' ? 5 : 0;
    expect(reads.ownStat - before - checks).toBeLessThanOrEqual(1);
  });
});
