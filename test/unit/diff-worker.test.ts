import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Change } from '../../src/core/diff/merge-diff.js';
import { NotARecord } from '../../src/core/records/record-key.js';
import { diffUnsorted, type UnsortedOptions, type UnsortedSide } from '../../src/core/diff/unsorted-diff.js';
import { startedThreads } from '../../src/threads/lane.js';
import { MULTILINGUAL } from '../helpers/hostile-text.js';
import { tempDir } from '../helpers/run.js';

// Issue 22: run from its bundle, `sgq diff` reads the older side and joins half the partitions
// in a worker thread (dist/diff-worker.cjs, built by the tests' global setup). It must give
// what the main thread alone gives: the same changes in the same order, the same counts, the
// same errors, and leave no file behind, stopped or not.

const WORKER = resolve('dist/diff-worker.cjs');

const side = (source: string, field: string): UnsortedSide => ({ source, isExport: true, field, stats: { missingKey: 0, duplicates: 0 }, where: source });

async function diff(files: [string, string], options: Omit<UnsortedOptions, 'tempDir'> & { field?: string }, thread?: boolean) {
  const field = options.field ?? 'username';
  const sides = [side(files[0], field), side(files[1], field)] as const;
  const changes: Change[] = [];
  const counts = await diffUnsorted(sides[0], sides[1], { ...options, tempDir: join(files[0], '..'), thread }, async (b) => void changes.push(...b));
  return { changes, counts, stats: sides.map((s) => s.stats) };
}

/** The diff both ways: in this thread, and with the worker; they must agree. */
async function bothWays(files: [string, string], options: Omit<UnsortedOptions, 'tempDir'> & { field?: string }) {
  const here = await diff(files, options);
  const started = startedThreads();
  const there = await diff(files, options, true);
  expect(there).toEqual(here);
  // The thread really ran (dist/diff-worker.cjs, as users run it), not this thread alone.
  expect(startedThreads()).toBe(started + 1);
  return here;
}

const leftIn = (dir: string) => readdirSync(dir).filter((f) => f.startsWith('.'));

describe('sgq diff with its worker thread', () => {
  it('is built', () => expect(existsSync(WORKER)).toBe(true));

  it('gives what the main thread gives, in memory, spilled and split again', async () => {
    const text = fc.oneof(fc.string({ maxLength: 3 }), fc.constantFrom(...MULTILINGUAL));
    const sideOf = fc.array(fc.tuple(text, fc.nat(2)), { maxLength: 150 });
    await fc.assert(
      // The worker holds and sorts its changes itself, or (a bound of 0 or 200 characters) hands them over as they come.
      fc.asyncProperty(sideOf, sideOf, fc.constantFrom(undefined, 64, 700), fc.boolean(), fc.constantFrom(undefined, 0, 200), async (a, b, partitionBytes, changed, workerHoldChars) => {
        const dir = tempDir('sgq-diff-worker-');
        const files: [string, string] = [join(dir, 'old.ndjson'), join(dir, 'new.ndjson.gz')];
        writeFileSync(files[0], a.map(([username, v]) => JSON.stringify({ username, v })).join('\n'));
        writeFileSync(files[1], gzipSync(b.map(([username, v]) => JSON.stringify({ username, v })).join('\r\n')));
        await bothWays(files, { changed, partitionBytes, workerHoldChars });
        expect(leftIn(dir)).toEqual([]);
      }),
      { numRuns: 40 },
    );
  });

  it('reads real-world text, ids past 2^64, renames and keys twice alike', async () => {
    const dir = tempDir('sgq-diff-worker-');
    const files: [string, string] = [join(dir, 'old.ndjson'), join(dir, 'new.ndjson')];
    const record = (i: number, name: string) => `{"id":${18446744073709551616n + BigInt(i)},"username":${JSON.stringify(name)},"bio":${JSON.stringify(MULTILINGUAL[i % MULTILINGUAL.length])},"tab":"a\\tb","esc":"\\u00e9\\ud83d\\ude00"}`;
    const older = Array.from({ length: 3000 }, (_, i) => record(i, `u${i}`));
    const newer = Array.from({ length: 3000 }, (_, i) => record(i + 100, i % 50 === 0 ? `renamed${i}` : `u${i + 100}`));
    // A key twice on each side: the first record of a key is kept.
    writeFileSync(files[0], [...older, older[7]!.replace('"bio"', '"x":1,"bio"')].join('\n'));
    writeFileSync(files[1], [...newer.reverse(), newer[3]!].join('\n'));
    const got = await bothWays(files, { changed: true, partitionBytes: 4096, field: 'id', names: { older: 'username', newer: 'username' } });
    expect(got.counts).toEqual({ gained: 100, lost: 100, renamed: 58, changed: 0, unchanged: 2842 });
    expect(got.stats.map((s) => s.duplicates)).toEqual([1, 1]);
    expect(got.changes.find((c) => c.change === 'renamed')?.line).toContain('"id":18446744073709551716');
    expect(leftIn(dir)).toEqual([]);
  });

  it('fails on a line that is not a record with the error of the main thread, and leaves no file', async () => {
    const dir = tempDir('sgq-diff-worker-');
    const files: [string, string] = [join(dir, 'old.ndjson'), join(dir, 'new.ndjson')];
    writeFileSync(files[0], `${Array.from({ length: 5000 }, (_, i) => `{"username":"u${i}"}`).join('\n')}\n[1,2]\n`);
    writeFileSync(files[1], '{"username":"u1"}\n');
    const here = await diff(files, { changed: false, partitionBytes: 4096 }).catch((e: unknown) => e);
    const there = await diff(files, { changed: false, partitionBytes: 4096 }, true).catch((e: unknown) => e);
    expect(here).toBeInstanceOf(NotARecord);
    expect(there).toBeInstanceOf(NotARecord);
    expect((there as Error).message).toBe((here as Error).message);
    expect(leftIn(dir)).toEqual([]);
  });

  it('stops on its signal while the sides are read and while changes are written, and removes every file', async () => {
    const dir = tempDir('sgq-diff-worker-');
    const files: [string, string] = [join(dir, 'old.ndjson'), join(dir, 'new.ndjson')];
    writeFileSync(files[0], Array.from({ length: 60_000 }, (_, i) => `{"username":"u${i}"}`).join('\n'));
    writeFileSync(files[1], Array.from({ length: 60_000 }, (_, i) => `{"username":"v${i}"}`).join('\n'));
    const reason = new Error('stopped');
    const sides = () => [side(files[0], 'username'), side(files[1], 'username')] as const;
    for (const stopAt of ['start', 'read', 'write'] as const) {
      const controller = new AbortController();
      if (stopAt === 'start') controller.abort(reason);
      // A spill on disk means the sides are being read (or joined): stop then.
      const watch = setInterval(() => stopAt === 'read' && leftIn(dir).length && controller.abort(reason), 1);
      const [older, newer] = sides();
      const run = diffUnsorted(older, newer, { changed: false, tempDir: dir, partitionBytes: 4096, signal: controller.signal, thread: true }, async () => {
        if (stopAt === 'write') controller.abort(reason);
      });
      await expect(run).rejects.toBe(reason);
      clearInterval(watch);
      expect(leftIn(dir), stopAt).toEqual([]);
    }
  });
});
