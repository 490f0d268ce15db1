import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ExternalSort, MERGE_BATCH } from '../../src/core/sort/external-sort.js';
import { TEXT_PIECE, lineBatches, textChunks } from '../../src/core/records/lines.js';
import { MERGE_READ, RUN_READ_MAX, RUN_READ_MIN, runChunks, runReadBytes } from '../../src/core/sort/run-file.js';
import { keyReader } from '../../src/core/records/record-key.js';
import { MemoryBudget, RunMemory } from '../../src/core/sort/memory-budget.js';
import { SnapshotCapture } from '../../src/core/snapshots/capture.js';
import { SnapshotStore } from '../../src/core/snapshots/store.js';
import { tempDir } from '../helpers/run.js';

// Issue 37: what a merge of spilled runs holds. At --concurrency 8, accounts of 50,000
// followers merged some 30 runs each, all at once; each run read through a file stream (three
// 16 KiB buffers ahead) and each batch out kept some 120 of those chunks alive through the
// slices that were its lines: the most of the nightly job's peak RSS.

const line = (username: string) => JSON.stringify({ username, bio: `bio of ${username}, ünïcödé 日本` });

describe('runReadBytes: what the runs of one merge read into at once', () => {
  it('shares MERGE_READ out among the runs, within RUN_READ_MIN and RUN_READ_MAX, in KiB', () => {
    for (let runs = 1; runs <= 2000; runs++) {
      const bytes = runReadBytes(runs);
      expect(bytes).toBeGreaterThanOrEqual(RUN_READ_MIN);
      expect(bytes).toBeLessThanOrEqual(RUN_READ_MAX);
      expect(bytes % 1024).toBe(0);
      // In all, no more than the merge's share, unless each run is at its least.
      if (bytes > RUN_READ_MIN) expect(bytes * runs).toBeLessThanOrEqual(MERGE_READ);
    }
    // A few runs read as much as before (16 KiB), 30 of them (an account of 50,000 followers at --concurrency 8) 8 KiB.
    expect(runReadBytes(4)).toBe(16 * 1024);
    expect(runReadBytes(30)).toBe(8 * 1024);
    expect(runReadBytes(128)).toBe(RUN_READ_MIN);
  });
});

describe('runChunks: a run read back through one buffer', () => {
  it('yields chunks of at most the size asked, all in the same memory, which lineBatches decodes whole (characters cut between chunks too)', async () => {
    const lines = Array.from({ length: 200 }, (_, i) => line(`user${i}`));
    const file = join(tempDir('sgq-run-'), 'run');
    writeFileSync(file, lines.map((l) => `${l}\n`).join(''));
    const buffers = new Set<ArrayBufferLike>();
    async function* watched() {
      for await (const chunk of runChunks(file, 37)) {
        expect(chunk.length).toBeLessThanOrEqual(37);
        buffers.add(chunk.buffer);
        yield chunk;
      }
    }
    const read: string[] = [];
    for await (const batch of lineBatches(watched())) read.push(...batch);
    expect(read).toEqual(lines);
    expect(buffers.size).toBe(1);
  });
});

describe('ExternalSort: a merge of many runs', () => {
  it(`yields every record once, in key order, in batches of at most MERGE_BATCH (${MERGE_BATCH}), and removes its runs`, async () => {
    const dir = tempDir('sgq-sort-');
    const names = Array.from({ length: 1500 }, (_, i) => `u${String((i * 7919) % 1500).padStart(5, '0')}`);
    // About 40 lines a run: some 40 runs, merged at once.
    const sort = new ExternalSort(keyReader('username'), dir, { runChars: 40 * line('u00000').length });
    for (let i = 0; i < names.length; i += 40) await sort.add(names.slice(i, i + 40).map(line));
    await sort.add([line('u00007')]); // a repeat: dropped
    expect(readdirSync(dir).length).toBeGreaterThan(30);
    const sizes: number[] = [];
    const out: string[] = [];
    for await (const batch of sort.sorted()) {
      sizes.push(batch.length);
      out.push(...batch.map((k) => k.key));
    }
    expect(out).toEqual([...names].sort());
    expect(Math.max(...sizes)).toBeLessThanOrEqual(MERGE_BATCH);
    expect(sort.stats.duplicates).toBe(1);
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe('textChunks: what one decoded string holds', () => {
  it(`decodes a large piece (gunzip's 128 KiB) TEXT_PIECE (${TEXT_PIECE}) bytes at a time, characters cut between them kept whole`, async () => {
    // Two-byte characters at odd offsets: every cut of TEXT_PIECE bytes falls inside one.
    const text = `a${'日本ü'.repeat(20_000)}\n`;
    const bytes = Buffer.from(text, 'utf8');
    expect(bytes.length).toBeGreaterThan(4 * TEXT_PIECE);
    async function* one() {
      yield bytes;
    }
    const strings: string[] = [];
    for await (const s of textChunks(one())) strings.push(s);
    expect(strings.join('')).toBe(text);
    expect(strings.length).toBeGreaterThan(4);
    for (const s of strings) expect(Buffer.byteLength(s, 'utf8')).toBeLessThanOrEqual(TEXT_PIECE);
  });
});

describe('MemoryBudget: told of the first spill', () => {
  it('calls onSpill once, when the first holder sharing it spills, and not while the holders fit', () => {
    let told = 0;
    const budget = new MemoryBudget(100, () => told++);
    const [a, b] = [budget.share(), budget.share()];
    expect(a.resize(60)).toBe(true);
    expect(b.resize(40)).toBe(true);
    expect(told).toBe(0);
    expect(a.resize(70)).toBe(false); // past the budget: a spills
    a.spilled();
    expect(told).toBe(1);
    b.spilled(); // b spills too: told once only
    expect(told).toBe(1);
  });
});

describe('SnapshotCapture: a spill tells the run', () => {
  it('a capture that spills its held lines for want of room in the run budget tells onSpill, once; one that fits does not', async () => {
    const store = new SnapshotStore(tempDir('sgq-store-'), { pid: process.pid, lock: async () => ({ release: () => undefined }) }, 'sandbox');
    const subject = (user: string) => ({ profile: 'default', route: 'graph/get_followers', how: 'username', user });
    const records = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => JSON.parse(line(`${prefix}${i}`)) as Record<string, string>);
    let told = 0;
    const memory = new RunMemory(20 * line('a00').length, () => told++);
    const small = new SnapshotCapture(store, subject('small'), undefined, memory);
    await small.add(records('a', 5), false);
    expect(told).toBe(0);
    const large = new SnapshotCapture(store, subject('large'), undefined, memory);
    await large.add(records('b', 40), false);
    await large.add(records('c', 40), false);
    expect(told).toBe(1);
    small.discard();
    large.discard();
  });
});
