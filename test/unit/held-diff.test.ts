import { writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { diffHeld } from '../../src/core/diff/held-diff.js';
import { LineBytes } from '../../src/core/records/line-bytes.js';
import { afterLast, type Keyed } from '../../src/core/records/keyed.js';
import { diffSorted, type Change } from '../../src/core/diff/merge-diff.js';
import { keyReader } from '../../src/core/records/record-key.js';
import { openText } from '../../src/core/records/lines.js';
import { MULTILINGUAL } from '../helpers/hostile-text.js';
import { tempDir } from '../helpers/run.js';

// Issue 37: the diff of a stored snapshot against an export held in memory compares the stored
// side's bytes with the held lines' own (LineBytes) and decodes only the lines that differ.
// Whatever the bytes and however they are cut into chunks, it must find what the merge of two
// keyed sides (diffSorted) finds, and read the stored side as lineBatches does: a CR before
// the LF dropped, blank lines skipped, repeats of a key counted, a line out of order an error.

const keyOf = keyReader('id');
const held = (lines: string[]): Keyed[] => lines.map((line) => ({ key: keyOf(line)!, line }));

/** The stored side's text as chunks of bytes cut at the given sizes (a character or a line may span two). */
function* chunks(text: string, sizes: number[]): Generator<Buffer> {
  const bytes = Buffer.from(text);
  let at = 0;
  for (let i = 0; at < bytes.length; i++) {
    const size = Math.max(1, sizes[i % sizes.length] ?? bytes.length);
    yield bytes.subarray(at, at + size);
    at += size;
  }
}

async function* asBatches<T>(items: T[]): AsyncGenerator<T[]> {
  if (items.length) yield items;
}

async function* fromChunks(parts: Iterable<Buffer>): AsyncGenerator<Buffer> {
  for (const part of parts) yield Buffer.from(part);
}

async function heldChanges(older: string, olderSizes: number[], newer: string[]) {
  const changes: Change[] = [];
  const stats = { missingKey: 0, duplicates: 0 };
  const names = { older: keyReader('name'), newer: keyReader('name') };
  const counts = await diffHeld(fromChunks(chunks(older, olderSizes)), LineBytes.of(held(newer)), { changed: true, names, olderKey: keyOf, stats, where: 'older' }, async (batch) => void changes.push(...batch));
  return { changes, counts, stats };
}

/** The reference: the stored side read as lines (lineBatches' rules), keyed and merged by diffSorted. */
async function sortedChanges(older: string, newer: string[]) {
  const changes: Change[] = [];
  const stats = { missingKey: 0, duplicates: 0 };
  const keyed: Keyed[] = [];
  let last: string | undefined;
  for (let line of older.split('\n')) {
    if (line.endsWith('\r')) line = line.slice(0, -1);
    if (line.trim() === '') continue;
    const key = keyOf(line);
    if (key === undefined) {
      stats.missingKey++;
      continue;
    }
    if (!afterLast(key, last, stats, 'older')) continue;
    last = key;
    keyed.push({ key, line });
  }
  const names = { older: keyReader('name'), newer: keyReader('name') };
  const counts = await diffSorted(asBatches(keyed), asBatches(held(newer)), { changed: true, names }, async (batch) => void changes.push(...batch));
  return { changes, counts, stats };
}

const line = (id: number, name: string, extra = '') => `{"id":${id},"name":${JSON.stringify(name)}${extra}}`;

describe('LineBytes', () => {
  it('holds each line as UTF-8 ended by LF, in pieces of whole lines, and finds a line equal only to its own bytes', () => {
    const lines = [line(1, 'a'), line(2, 'José María 🏳️‍🌈'), line(3, 'x'.repeat(70_000)), line(4, 'été')];
    const bytes = LineBytes.of(held(lines));
    expect(Buffer.concat([...bytes.pieces()]).toString()).toBe(lines.map((l) => `${l}\n`).join(''));
    expect([...bytes.pieces()].length).toBeGreaterThan(1);
    for (const piece of bytes.pieces()) expect(piece.at(-1)).toBe(0x0a);
    expect(bytes.count).toBe(4);
    const other = Buffer.from(`xx${lines[1]}\n${lines[0]}`);
    expect(bytes.equals(1, other, 2, 2 + Buffer.byteLength(lines[1]!))).toBe(true);
    expect(bytes.equals(0, other, 2, 2 + Buffer.byteLength(lines[1]!))).toBe(false);
    expect(bytes.equals(0, other, other.length - Buffer.byteLength(lines[0]!), other.length)).toBe(true);
    expect(bytes.equals(0, other, other.length - Buffer.byteLength(lines[0]!) + 1, other.length)).toBe(false);
  });
});

describe('LineBytes of a large export', () => {
  it('keeps no bytes past its bound, and compares each line encoded again, the same way', () => {
    // 2,000 lines of about 2,200 characters: past a quarter of a sort's budget on any heap.
    const lines = Array.from({ length: 2000 }, (_, i) => line(i, `é${'x'.repeat(2200)}${i}`));
    const bytes = LineBytes.of(held(lines));
    expect(Buffer.concat([...bytes.pieces()]).toString()).toBe(lines.map((l) => `${l}\n`).join(''));
    const other = Buffer.from(`${lines[7]}\n${lines[8]}`);
    const first = Buffer.byteLength(lines[7]!);
    expect(bytes.equals(7, other, 0, first)).toBe(true);
    expect(bytes.equals(8, other, 0, first)).toBe(false);
    expect(bytes.equals(8, other, first + 1, other.length)).toBe(true);
    expect(bytes.equals(8, other, first + 2, other.length)).toBe(false);
  });
});

describe('diffHeld over bytes', () => {
  it('finds gained, lost, renamed and changed records, unchanged ones not decoded, with CRLF, blank lines and repeats', async () => {
    const older = [line(1, 'ann'), line(2, 'bob'), '', line(3, 'cy'), `${line(4, 'dé')}\r`, line(4, 'dé'), '  ', line(6, 'fé', ',"bio":"été"'), '{"name":"no id"}', line(7, 'gus')].join('\n');
    const newer = [line(1, 'ann'), line(3, 'cyril'), line(4, 'dé'), line(5, 'eve'), line(6, 'fé', ',"bio":"hiver"'), line(7, 'gus')];
    for (const sizes of [[], [1], [3, 7], [64]]) {
      const got = await heldChanges(older, sizes, newer);
      expect(got).toEqual(await sortedChanges(older, newer));
      expect(got.counts).toMatchObject({ gained: 1, lost: 1, renamed: 1, changed: 1, unchanged: 3 });
      expect(got.stats).toEqual({ missingKey: 1, duplicates: 1 });
    }
  });

  it('refuses a stored side out of key order', async () => {
    await expect(heldChanges([line(2, 'b'), line(1, 'a')].join('\n'), [], [line(1, 'a')])).rejects.toThrow(/older is not in key order/);
  });

  it('finds what the merge of keyed sides finds, whatever the lines and the chunks', async () => {
    const name = fc.oneof(fc.constantFrom(...MULTILINGUAL), fc.string({ maxLength: 6 }));
    const side = fc.uniqueArray(fc.record({ id: fc.integer({ min: 1, max: 40 }), name }), { selector: (r) => String(r.id), maxLength: 25 });
    const sorted = (records: { id: number; name: string }[]) => records.map((r) => ({ key: String(r.id), line: line(r.id, r.name) })).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    await fc.assert(
      fc.asyncProperty(side, side, fc.array(fc.integer({ min: 1, max: 50 }), { maxLength: 5 }), fc.boolean(), async (a, b, sizes, crlf) => {
        const older = sorted(a).map((k) => k.line).join(crlf ? '\r\n' : '\n');
        const newer = sorted(b).map((k) => k.line);
        expect(await heldChanges(older, sizes, newer)).toEqual(await sortedChanges(older, newer));
      }),
      { numRuns: 300 },
    );
  });
});

describe('openText on a snapshot open for a diff', () => {
  it('reads a small file in one read and one that finds its end: no read of the first two bytes alone', async () => {
    const text = `${Array.from({ length: 200 }, (_, i) => line(i, `n${i}`)).join('\n')}\n`;
    for (const [name, bytes] of [['a.ndjson.gz', gzipSync(text)], ['a.ndjson', Buffer.from(text)]] as const) {
      const file = join(tempDir('sgq-held-'), name);
      writeFileSync(file, bytes);
      const handle = await open(file, 'r');
      const reads: number[] = [];
      const read = handle.read.bind(handle);
      handle.read = ((buffer: Buffer, offset: number, length: number, position: number) => {
        reads.push(length);
        return read(buffer, offset, length, position);
      }) as typeof handle.read;
      try {
        let got = '';
        for await (const chunk of await openText(handle)) got += (chunk as Buffer).toString();
        expect(got).toBe(text);
        expect(reads.length).toBe(2);
      } finally {
        await handle.close();
      }
    }
  });
});
