import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ExternalSort, batchesOf } from '../../src/core/sort/external-sort.js';
import { SnapshotStore } from '../../src/core/snapshots/store.js';
import { diffSorted, type Change } from '../../src/core/diff/merge-diff.js';
import { diffHeld } from '../../src/core/diff/held-diff.js';
import { LineBytes } from '../../src/core/records/line-bytes.js';
import { keyReader, recordKey } from '../../src/core/records/record-key.js';
import { parseJson, stringifyJson } from '../../src/core/json.js';
import { exportLines, glimpse, headGlimpse } from '../../src/core/records/sources.js';
import { open } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { diffUnsorted } from '../../src/core/diff/unsorted-diff.js';
import { keyedInOrder } from '../../src/core/records/keyed.js';
import { createFormatter } from '../../src/cli/formats/formats.js';
import { StreamSink } from '../../src/cli/output/sink.js';
import { tempDir } from '../helpers/run.js';

const NIGHT = '2026-11-20T03:15:00.000Z';
const line = (username: string, extra: Record<string, unknown> = {}) => JSON.stringify({ username, ...extra });

async function collect<T>(batches: AsyncIterable<T[]>): Promise<T[]> {
  const out: T[] = [];
  for await (const b of batches) out.push(...b);
  return out;
}

async function* oneBatch(lines: string[]): AsyncGenerator<string[]> {
  if (lines.length) yield lines;
}

describe('keyReader', () => {
  const key = keyReader('username');
  it('reads a first string field without parsing, and anything else by parsing', () => {
    expect(key('{"username":"jack","x":1}')).toBe('jack');
    expect(key('{"x":"{\\"username\\":\\"fake\\"}","username":"real"}')).toBe('real');
    expect(key('{"username":"a\\"b"}')).toBe('a"b');
    expect(key('{"x":1}')).toBeUndefined();
    expect(keyReader('user_id')('{"user_id":12345678901234567891}')).toBe('12345678901234567891');
    expect(() => key('not json')).toThrow(/not JSON/);
    expect(() => key('[1]')).toThrow(/not a JSON object/);
  });
});

describe('ExternalSort', () => {
  it('sorts on disk beyond its run size exactly as in memory, keeps the first of a key, and leaves no file', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.string({ maxLength: 6 }), fc.nat(9)), { maxLength: 300 }), fc.integer({ min: 1, max: 200 }), fc.integer({ min: 2, max: 5 }), async (items, runChars, fanIn) => {
        const dir = tempDir('sgq-sort-');
        // A run of a few characters forces many spills, and a small fan-in merges of merges.
        const sort = new ExternalSort(keyReader('username'), dir, { runChars, fanIn });
        const lines = items.map(([name, n]) => line(name, { n }));
        for (let i = 0; i < lines.length; i += 7) await sort.add(lines.slice(i, i + 7));
        const got = (await collect(sort.sorted())).map((k) => k.line);
        const firstOfKey = new Map<string, string>();
        for (const [name, n] of items) if (!firstOfKey.has(name)) firstOfKey.set(name, line(name, { n }));
        const keys = [...firstOfKey.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        expect(got).toEqual(keys.map((k) => firstOfKey.get(k)));
        expect(sort.stats.duplicates).toBe(items.length - keys.length);
        expect(readdirSync(dir)).toEqual([]);
      }),
      { numRuns: 60 },
    );
  });
});

describe('ExternalSort.add', () => {
  it('spills each time what it holds reaches its bound, within one batch too: a batch past the bound is never held whole', async () => {
    const dir = tempDir('sgq-sort-');
    const lines = Array.from({ length: 100 }, (_, i) => line(`u${String(99 - i).padStart(3, '0')}`));
    const sort = new ExternalSort(keyReader('username'), dir, { runChars: 10 * lines[0]!.length });
    await sort.add(lines);
    expect(readdirSync(dir)).toHaveLength(10);
    expect((await collect(sort.sorted())).map((k) => k.line)).toEqual([...lines].reverse());
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe('ExternalSort.addRun', () => {
  it('merges runs given as bytes in key order, the earlier run first on a tie, past its fan-in too, and removes them', async () => {
    const dir = tempDir('sgq-sort-');
    const sort = new ExternalSort(keyReader('username'), dir, { fanIn: 2 });
    const runs = [['a', 'c', 'e'], ['b', 'c', 'f'], ['a', 'd']];
    for (const [r, names] of runs.entries()) await sort.addRun([Buffer.from(names.map((name) => `${line(name, { r })}\n`).join(''))]);
    expect(sort.spilled).toBe(true);
    expect((await collect(sort.sorted())).map((k) => k.line)).toEqual(['a0', 'b1', 'c0', 'd2', 'e0', 'f1'].map((x) => line(x[0]!, { r: Number(x[1]) })));
    expect(sort.stats.duplicates).toBe(2);
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe('recordKey', () => {
  it("reads a parsed record's key as keyReader reads it from the record's line", () => {
    const value = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.integer(), fc.double(), fc.bigInt(), fc.boolean(), fc.constant(null), fc.dictionary(fc.string({ maxLength: 3 }), fc.string()), fc.array(fc.integer(), { maxLength: 3 }));
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom('id', 'x', 'name'), value), fc.constantFrom('id', 'x', 'y'), (fields, key) => {
        // The record as sgq holds it: parsed from the service's text, big integers kept as text.
        const text = `{${Object.entries(fields).map(([k, v]) => `${JSON.stringify(k)}:${typeof v === 'bigint' ? v.toString() : JSON.stringify(v)}`).join(',')}}`;
        const record = parseJson(text) as Record<string, unknown>;
        expect(recordKey(record, key)).toBe(keyReader(key)(stringifyJson(record as never)));
      }),
      { numRuns: 500 },
    );
  });
});

describe('SnapshotStore: a staged snapshot', () => {
  it('holds exactly its lines as gzip NDJSON, whatever their length and characters (written in pieces, long lines alone)', async () => {
    const store = new SnapshotStore(tempDir('sgq-store-'), { pid: process.pid, lock: async () => ({ release: () => undefined }) }, 'sandbox');
    const subject = { profile: 'default', route: 'graph/get_followers', how: 'username', user: 'jack' };
    // Around the 64 KiB scratch (21,845 UTF-16 units at 3 bytes each): short, long, and longer lines, two-byte and astral text.
    const sizes = [1, 100, 21_844, 21_845, 21_846, 30_000, 70_000, 5, 200_000, 3];
    const lines = sizes.map((n, i) => JSON.stringify({ username: `u${String(i).padStart(2, '0')}`, bio: 'é😀a'.repeat(Math.ceil(n / 4)).slice(0, n) }));
    const keyed = lines.map((line, i) => ({ key: `u${String(i).padStart(2, '0')}`, line }));
    const { current } = await store.commit(subject, batchesOf(keyed), { taken_at: NIGHT, complete: true, credits_used: 1, pages: 1, sorted_by: 'username', identity: 'username' });
    await current.handle.close();
    const [kept] = store.history(subject);
    expect(kept!.meta.records).toBe(lines.length);
    expect(gunzipSync(readFileSync(kept!.dataPath)).toString('utf8')).toBe(`${lines.join('\n')}\n`);
  });
});

describe('diffSorted', () => {
  const keyed = (lines: string[]) => keyedInOrder(oneBatch(lines), keyReader('username'), { missingKey: 0, duplicates: 0 }, 'test');

  it('finds exactly the keys only in one side, and changed records only when asked', async () => {
    await fc.assert(
      fc.asyncProperty(fc.dictionary(fc.string({ maxLength: 5 }), fc.nat(3)), fc.dictionary(fc.string({ maxLength: 5 }), fc.nat(3)), async (a, b) => {
        const side = (d: Record<string, number>) => Object.keys(d).sort((x, y) => (x < y ? -1 : x > y ? 1 : 0)).map((k) => line(k, { v: d[k] }));
        for (const changed of [false, true]) {
          const changes: Change[] = [];
          const counts = await diffSorted(keyed(side(a)), keyed(side(b)), { changed }, async (batch) => void changes.push(...batch));
          const only = (x: Record<string, number>, y: Record<string, number>) => Object.keys(x).filter((k) => !Object.hasOwn(y, k)).sort();
          const byKind = (kind: string) => changes.filter((c) => c.change === kind).map((c) => JSON.parse(c.line).username as string).sort();
          expect(byKind('gained')).toEqual(only(b, a));
          expect(byKind('lost')).toEqual(only(a, b));
          const both = Object.keys(a).filter((k) => Object.hasOwn(b, k));
          const differ = both.filter((k) => a[k] !== b[k]).sort();
          expect(byKind('changed')).toEqual(changed ? differ : []);
          expect(counts.unchanged).toBe(changed ? both.length - differ.length : both.length);
        }
      }),
      { numRuns: 100 },
    );
  });

  it('refuses a side that is not in key order, rather than give a wrong answer', async () => {
    const bad = keyed([line('b'), line('a')]);
    await expect(diffSorted(keyed([line('a')]), bad, { changed: false }, async () => undefined)).rejects.toThrow(/not in key order/);
  });
});

describe('diffHeld: a stored side read as bytes against one held in memory', () => {
  // Records keyed by id, with a username (a rename) and a value (a change); an older side may
  // repeat an id, lack it, or be out of order, as a hand-edited or damaged file could.
  const record = fc.record({ id: fc.option(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'é'), { nil: undefined }), username: fc.constantFrom('x', 'y'), v: fc.nat(2) });
  const text = (r: { id?: string; username: string; v: number }) => JSON.stringify(r);
  const byId = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
  const names = { older: keyReader('username'), newer: keyReader('username') };

  it('property: the changes, their order, the counts and what was left out are those of diffSorted', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(record, { maxLength: 12 }), fc.array(record, { maxLength: 12 }), fc.boolean(), fc.boolean(), fc.nat(40), async (a, b, sorted, changed, chunk) => {
        const older = (sorted ? [...a].sort((x, y) => byId(x.id ?? '', y.id ?? '')) : a).map(text);
        // The newer side as SnapshotCapture holds it: keyed, in order, once per id.
        const newer = [...new Map(b.filter((r) => r.id !== undefined).map((r) => [r.id!, { key: r.id!, line: text(r) }] as const)).values()].sort((x, y) => byId(x.key, y.key));
        const batches = async function* () {
          for (let i = 0; i < older.length; i += chunk + 1) yield older.slice(i, i + chunk + 1);
        };
        const run = async <T>(diff: (emit: (batch: Change[]) => Promise<void>, stats: { missingKey: number; duplicates: number }) => Promise<T>) => {
          const changes: Change[] = [];
          const stats = { missingKey: 0, duplicates: 0 };
          try {
            return { counts: await diff(async (batch) => void changes.push(...batch), stats), changes, stats };
          } catch (error) {
            return { error: (error as Error).message };
          }
        };
        const expected = await run((emit, stats) => diffSorted(keyedInOrder(batches(), keyReader('id'), stats, 'older'), batchesOf(newer), { changed, names }, emit));
        // The stored side as its bytes, cut every chunk + 1 bytes (a line, or a character, may span two).
        const bytes = async function* () {
          const all = Buffer.from(older.map((line) => `${line}\n`).join(''));
          for (let i = 0; i < all.length; i += chunk + 1) yield all.subarray(i, i + chunk + 1);
        };
        const got = await run((emit, stats) => diffHeld(bytes(), LineBytes.of(newer), { changed, names, olderKey: keyReader('id'), stats, where: 'older' }, emit));
        expect(got).toEqual(expected);
      }),
      { numRuns: 400 },
    );
  });
});

describe('headGlimpse: the shape of a stored snapshot from its head', () => {
  const glimpsed = async (name: string, lines: string[], gzip = true) => {
    const file = join(tempDir('sgq-head-'), name);
    const text = `${lines.join('\n')}\n`;
    writeFileSync(file, gzip ? gzipSync(text, { level: 2 }) : text);
    const handle = await open(file, 'r');
    try {
      return { head: await headGlimpse(handle), whole: await glimpse(oneBatch(lines)) };
    } finally {
      await handle.close();
    }
  };

  it('is the glimpse of the whole file where its head holds a record with an identity, and undefined where it does not', async () => {
    const many = Array.from({ length: 5000 }, (_, i) => JSON.stringify({ follower_username: `u${i}`, follower_userid: 10 ** 18 + i, bio: 'é'.repeat(i % 50) }));
    const small = await glimpsed('a.ndjson.gz', many);
    expect(small.head).toEqual(small.whole);
    expect(small.head!.fields).toBeDefined();
    // The first records have no identity, and the first with one is past the head: the whole file is read instead.
    const late = await glimpsed('b.ndjson.gz', [...Array.from({ length: 300 }, (_, i) => JSON.stringify({ n: i, pad: createHash('sha256').update(String(i)).digest('hex').repeat(2) })), ...many]);
    expect(late.head).toBeUndefined();
    expect(late.whole.fields).toBeDefined();
    // A first line longer than the head, and a file that is not gzip.
    const noise = Array.from({ length: 2000 }, (_, i) => createHash('sha256').update(String(i)).digest('hex')).join('');
    expect((await glimpsed('c.ndjson.gz', [JSON.stringify({ username: 'a', bio: noise }), many[0]!])).head).toBeUndefined();
    // A file whole within the head: its glimpse.
    const tiny = await glimpsed('e.ndjson.gz', [JSON.stringify({ username: 'a', bio: 'x'.repeat(200_000) })]);
    expect(tiny.head).toEqual(tiny.whole);
    expect((await glimpsed('d.ndjson', many, false)).head).toBeUndefined();
  });
});

describe('reading exports', () => {
  it('reads back what the csv formatter wrote: quotes, commas, line breaks, empty cells', async () => {
    const records = [
      { username: 'a', bio: 'says "hi", then\r\nleaves', n: null },
      { username: 'b', bio: '', n: 2 },
    ];
    const out = new PassThrough();
    let text = '';
    out.on('data', (c: Buffer) => (text += c.toString()));
    const formatter = await createFormatter('csv', new StreamSink(out, () => undefined));
    formatter.write(records);
    formatter.end();
    const file = join(tempDir(), 'x.csv.gz');
    writeFileSync(file, gzipSync(text));
    const lines = await collect(exportLines(file));
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      { username: 'a', bio: 'says "hi", then\r\nleaves', n: null },
      { username: 'b', bio: null, n: '2' },
    ]);
  });

  it('reads NDJSON and the one-record-a-line JSON array sgq writes, gzipped or not', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'a.json'), '[\n{"username":"b"},\n{"username":"a"}\n]\n');
    writeFileSync(join(dir, 'a.ndjson.gz'), gzipSync('{"username":"b"}\r\n\n{"username":"a"}\n'));
    writeFileSync(join(dir, 'empty.ndjson'), '');
    for (const name of ['a.json', 'a.ndjson.gz']) {
      const side = (source: string) => ({ source, isExport: true, field: 'username', stats: { missingKey: 0, duplicates: 0 }, where: source });
      const changes: Change[] = [];
      await diffUnsorted(side(join(dir, 'empty.ndjson')), side(join(dir, name)), { changed: false, tempDir: dir }, async (batch) => void changes.push(...batch));
      expect(changes).toEqual([
        { change: 'gained', line: '{"username":"a"}' },
        { change: 'gained', line: '{"username":"b"}' },
      ]);
    }
  });
});
