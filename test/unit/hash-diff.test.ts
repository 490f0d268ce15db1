import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ByteKeyReader, keyBytes } from '../../src/core/diff/byte-key.js';
import { LineSplitter } from '../../src/core/diff/byte-lines.js';
import { ExternalSort } from '../../src/core/sort/external-sort.js';
import { FIRST, KeyTable, SECOND } from '../../src/core/key-table.js';
import { diffSorted, type Change } from '../../src/core/diff/merge-diff.js';
import { keyReader } from '../../src/core/records/record-key.js';
import { diffUnsorted, type UnsortedSide } from '../../src/core/diff/unsorted-diff.js';
import { tempDir } from '../helpers/run.js';

/** Any UTF-16 text: ASCII, other code points, and lone surrogates. */
const anyText = (maxLength: number) =>
  fc.string({ maxLength, unit: fc.oneof(fc.constantFrom('a', 'b', '"', '\\', ',', '{', ':', ' ', '\n', 'é', '😀', '\ud800', '\udc00', '\ufffd'), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })) });

// Issue 22: `sgq diff` of sides in no order is a hash join. It must give what the merge of the
// sorted sides gave: the same changes, in the same order, the same counts.

/** The key ByteKeyReader reads from a line, as the bytes keyBytes gives for a key; undefined when none. */
function byteKey(field: string, line: string): Buffer | undefined {
  const reader = new ByteKeyReader(field);
  const buf = Buffer.from(`junk\n${line}\n{"x":1}`);
  const start = 5;
  if (!reader.read(buf, start, start + Buffer.byteLength(line))) return undefined;
  return Buffer.from(reader.buf.subarray(reader.start, reader.end));
}

const side = (source: string, field = 'username'): UnsortedSide => ({ source, isExport: true, field, stats: { missingKey: 0, duplicates: 0 }, where: source });

/** The changes and counts the merge of the two sides, sorted on disk, gives. */
async function byMerge(dir: string, older: string[], newer: string[], changed: boolean) {
  const sorted = async (lines: string[]) => {
    const sort = new ExternalSort(keyReader('username'), dir);
    await sort.add(lines);
    return sort.sorted();
  };
  const changes: Change[] = [];
  const counts = await diffSorted(await sorted(older), await sorted(newer), { changed }, async (b) => void changes.push(...b));
  return { changes, counts };
}

async function byHash(dir: string, older: string, newer: string, options: { changed: boolean; partitionBytes?: number; signal?: AbortSignal }) {
  const changes: Change[] = [];
  const sides = [side(older), side(newer)] as const;
  const counts = await diffUnsorted(sides[0], sides[1], { ...options, tempDir: dir }, async (b) => void changes.push(...b));
  return { changes, counts, stats: sides.map((s) => s.stats) };
}

describe('ByteKeyReader', () => {
  it('reads the key keyReader reads, as the same bytes, whatever the line', () => {
    const value = fc.oneof(fc.string(), anyText(6), fc.integer(), fc.constant(null), fc.bigInt().map((n) => ({ big: n })), fc.constant({ nested: { username: 'x' } }));
    const record = fc.dictionary(fc.constantFrom('username', 'id', 'bio', 'x'), value);
    const text = (r: Record<string, unknown>) => JSON.stringify(r, (_k, v: unknown) => (v && typeof v === 'object' && 'big' in v ? `${(v as { big: bigint }).big}` : v));
    const spaced = fc.tuple(record, fc.boolean()).map(([r, spaces]) => (spaces ? text(r).replace(/,/g, ', ') : text(r)));
    fc.assert(
      fc.property(spaced, fc.constantFrom('username', 'id'), (line, field) => {
        const want = keyReader(field)(line);
        expect(byteKey(field, line)).toEqual(want === undefined ? undefined : keyBytes(want));
      }),
      { numRuns: 500 },
    );
  });

  it('reads escapes, non-ASCII, numbers past 2^53 and lines the scan cannot read alike', () => {
    const k = (line: string, field = 'username') => byteKey(field, line)?.toString('hex');
    // An escape and the character it stands for are one key.
    expect(k('{"username":"\\u00e9"}')).toBe(k('{"username":"é"}'));
    expect(k('{"username":"a\\"b"}')).toBe(Buffer.from('a"b').toString('hex'));
    // A lone surrogate is not the replacement character UTF-8 would make of it.
    expect(k('{"username":"\\ud800"}')).not.toBe(k('{"username":"\\ufffd"}'));
    expect(k('{"id":12345678901234567891}', 'id')).toBe(Buffer.from('12345678901234567891').toString('hex'));
    expect(k('{"id":12345678901234567891}', 'id')).not.toBe(k('{"id":12345678901234567892}', 'id'));
    // Nested objects, spaces and other number forms are parsed.
    expect(k('{"a":{"username":"fake"},"username":"real"}')).toBe(Buffer.from('real').toString('hex'));
    expect(k('{ "username" : "x" }')).toBe(Buffer.from('x').toString('hex'));
    expect(k('{"id":1.0}', 'id')).toBe(Buffer.from('1.0').toString('hex'));
    expect(k('{"username":null}')).toBeUndefined();
    expect(() => k('not json')).toThrow(/not JSON/);
  });
});

describe('KeyTable', () => {
  it('keeps keys whose hashes collide apart, through growth, in its home buffer and copied', () => {
    const home = Buffer.from(Array.from({ length: 2500 }, (_, i) => `key${i}`).join(''));
    const table = new KeyTable(4);
    table.reset(4, home);
    // Half the keys live in the home buffer (kept where they are), half in buffers of their own (copied).
    const keys = Array.from({ length: 5000 }, (_, i) => {
      if (i >= 2500) return { buf: Buffer.from(`key${i}`), start: 0, end: `key${i}`.length };
      const start = home.indexOf(`key${i}k`) === -1 ? home.length - `key${i}`.length : home.indexOf(`key${i}k`);
      return { buf: home, start, end: start + `key${i}`.length };
    });
    // Every key with one of three hashes: each lookup must compare bytes.
    for (const [i, { buf, start, end }] of keys.entries()) {
      const empty = table.find(buf, start, end, i % 3);
      expect(empty).toBeLessThan(0);
      table.put(empty, buf, start, end, i % 3, i, i + 7, 1);
    }
    expect(table.size).toBe(5000);
    for (const [i, key] of keys.entries()) {
      const copy = Buffer.from(`xkey${i}`);
      const at = table.find(copy, 1, copy.length, i % 3);
      expect(table.cells[at + FIRST]).toBe(i);
      expect(table.cells[at + SECOND]).toBe(i + 7);
      expect(table.find(key.buf, key.start, key.end, i % 3)).toBe(at);
    }
    expect(table.find(Buffer.from('key5000'), 0, 7, 5000 % 3)).toBeLessThan(0);
    table.reset(10, home);
    expect(table.find(keys[0]!.buf, keys[0]!.start, keys[0]!.end, 0)).toBeLessThan(0);
  });
});

describe('LineSplitter', () => {
  it('gives the same lines however the bytes are cut', () => {
    fc.assert(
      fc.property(fc.array(anyText(8).filter((s) => !s.includes('\n')), { maxLength: 20 }), fc.array(fc.nat(40), { maxLength: 10 }), (lines, cuts) => {
        const bytes = Buffer.from(lines.join('\n'));
        const got: string[] = [];
        const splitter = new LineSplitter((b, s, e) => got.push(b.toString('utf8', s, e)), false);
        let at = 0;
        for (const cut of [...cuts.map((c) => Math.min(at + c, bytes.length)), bytes.length]) {
          splitter.push(bytes.subarray(at, Math.max(at, cut)));
          at = Math.max(at, cut);
        }
        splitter.end();
        const want = Buffer.from(lines.join('\n')).toString().split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l)).filter((l) => l.trim() !== '');
        expect(got).toEqual(want);
      }),
      { numRuns: 300 },
    );
  });
});

describe('diffUnsorted', () => {
  const line = (username: string, v: number) => JSON.stringify({ username, v });
  const sideOf = fc.array(fc.tuple(fc.oneof(fc.string({ maxLength: 4 }), anyText(3)), fc.nat(2)), { maxLength: 120 });

  it('gives the changes, order and counts of the merge, in memory, spilled, and split again', async () => {
    await fc.assert(
      fc.asyncProperty(sideOf, sideOf, fc.constantFrom(undefined, 64, 700), fc.boolean(), async (a, b, partitionBytes, changed) => {
        const dir = tempDir('sgq-hash-');
        const [older, newer] = [a.map(([k, v]) => line(k, v)), b.map(([k, v]) => line(k, v))];
        writeFileSync(join(dir, 'old.ndjson'), older.join('\n'));
        writeFileSync(join(dir, 'new.ndjson.gz'), gzipSync(newer.join('\r\n')));
        const want = await byMerge(dir, older, newer, changed);
        const got = await byHash(dir, join(dir, 'old.ndjson'), join(dir, 'new.ndjson.gz'), { changed, partitionBytes });
        expect(got.changes).toEqual(want.changes);
        expect(got.counts).toEqual(want.counts);
        expect(got.stats.map((s) => s.duplicates)).toEqual([older.length - new Set(a.map(([k]) => k)).size, newer.length - new Set(b.map(([k]) => k)).size]);
        expect(readdirSync(dir).sort()).toEqual(['new.ndjson.gz', 'old.ndjson']);
      }),
      { numRuns: 80 },
    );
  });

  it('spills partitions, splits one larger than estimated, and leaves no file', async () => {
    const dir = tempDir('sgq-hash-');
    const older = Array.from({ length: 20_000 }, (_, i) => line(`u${i}`, 0));
    const newer = Array.from({ length: 20_000 }, (_, i) => line(`u${i + 500}`, i % 1000 === 0 ? 1 : 0));
    // 64 partitions at most: of 4 KiB each, they hold too much and are split again by the next bits of the hash.
    writeFileSync(join(dir, 'old.ndjson.gz'), gzipSync(older.join('\n')));
    writeFileSync(join(dir, 'new.ndjson'), newer.reverse().join('\n'));
    const got = await byHash(dir, join(dir, 'old.ndjson.gz'), join(dir, 'new.ndjson'), { changed: true, partitionBytes: 4096 });
    const want = await byMerge(dir, older, newer, true);
    expect(got.counts).toEqual({ gained: 500, lost: 500, renamed: 0, changed: 20, unchanged: 19_480 });
    expect(got.changes).toEqual(want.changes);
    expect(readdirSync(dir).sort()).toEqual(['new.ndjson', 'old.ndjson.gz']);
  });

  it('stops on its signal, with its reason, before reading and while writing changes, and removes what it spilled', async () => {
    const dir = tempDir('sgq-hash-');
    writeFileSync(join(dir, 'old.ndjson'), Array.from({ length: 50_000 }, (_, i) => line(`u${i}`, 0)).join('\n'));
    writeFileSync(join(dir, 'new.ndjson'), Array.from({ length: 50_000 }, (_, i) => line(`v${i}`, 0)).join('\n'));
    const controller = new AbortController();
    const reason = new Error('stopped');
    const sides = [side(join(dir, 'old.ndjson')), side(join(dir, 'new.ndjson'))] as const;
    let batches = 0;
    const run = diffUnsorted(sides[0], sides[1], { changed: false, tempDir: dir, partitionBytes: 4096, signal: controller.signal }, async () => {
      if (++batches === 2) controller.abort(reason);
    });
    await expect(run).rejects.toBe(reason);
    expect(batches).toBe(2);
    expect(readdirSync(dir).sort()).toEqual(['new.ndjson', 'old.ndjson']);
    const early = diffUnsorted(sides[0], sides[1], { changed: false, tempDir: dir, signal: AbortSignal.abort(reason) }, async () => undefined);
    await expect(early).rejects.toBe(reason);
    expect(readdirSync(dir).sort()).toEqual(['new.ndjson', 'old.ndjson']);
  });
});
