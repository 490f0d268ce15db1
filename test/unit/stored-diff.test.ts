import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { diffSorted, type Change } from '../../src/core/diff/merge-diff.js';
import { diffStored } from '../../src/core/diff/stored-diff.js';
import { keyedInOrder } from '../../src/core/records/keyed.js';
import { MAX_LINE_CHARS, lineBatches } from '../../src/core/records/lines.js';
import { keyReader } from '../../src/core/records/record-key.js';

// `sgq diff USER` over two stored snapshots merges their bytes (stored-diff.ts) rather than
// lines decoded and keyed as text. Whatever the bytes and however they are cut into chunks, it
// must find what diffSorted finds over the same files read as lines (lineBatches) and keyed
// (keyedInOrder): the same changes in the same order, the same counts, the same lines left
// out, the same error for a side out of order.

/** Keys whose UTF-8 order is not their UTF-16 order (U+FF5E against an astral character), escapes, a lone surrogate, integers. */
const KEYS = ['a', 'b', 'ab', 'B', '10', '9', 'é', 'ü', '\uFF5E', '\uE000', '😀', '𝒜', 'a😀', 'a\uFF5E', 'x"y', 'tab\there', '\ud800', 7, 10, -3, 12345678901234567890n];

const keyJson = (k: (typeof KEYS)[number]) => (typeof k === 'bigint' ? k.toString() : JSON.stringify(k));
const keyString = (k: (typeof KEYS)[number]) => (typeof k === 'string' ? k : k.toString());
const byText = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);

const record = fc.record({
  key: fc.option(fc.constantFrom(...KEYS), { nil: undefined, freq: 8 }),
  name: fc.constantFrom('ann', 'bob', 'José'),
  v: fc.nat(2),
  // Where the key is: first (the scan's fast path), last, escaped, or spaced out (parsed).
  form: fc.constantFrom('first', 'last', 'escaped', 'spaced', 'null'),
});
type Rec = typeof record extends fc.Arbitrary<infer T> ? T : never;

function lineOf(r: Rec): string {
  const rest = `"name":${JSON.stringify(r.name)},"v":${r.v}`;
  if (r.key === undefined) return `{${rest}}`;
  if (r.form === 'null') return `{"k":null,${rest}}`;
  const key = r.form === 'escaped' && typeof r.key === 'string' ? `"${r.key.split('').map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}"` : keyJson(r.key);
  if (r.form === 'last') return `{${rest},"k":${key}}`;
  if (r.form === 'spaced') return `{ "k" : ${key}, ${rest}}`;
  return `{"k":${key},${rest}}`;
}

/** A side's text: its records in key order (as a store keeps them) or as they came, ends LF or CRLF, a blank line here and there. */
function sideText(records: Rec[], sorted: boolean, crlf: boolean, blanks: boolean): Buffer {
  const ordered = sorted ? [...records].sort((x, y) => byText(x.key === undefined ? '' : keyString(x.key), y.key === undefined ? '' : keyString(y.key))) : records;
  const lines = ordered.flatMap((r, i) => (blanks && i % 3 === 1 ? ['', lineOf(r)] : [lineOf(r)]));
  return Buffer.from(lines.map((l) => `${l}${crlf ? '\r\n' : '\n'}`).join(''));
}

async function* cut(bytes: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let i = 0; i < bytes.length; i += size) yield Buffer.from(bytes.subarray(i, i + size));
}

type Outcome = { counts: unknown; changes: Change[]; stats: unknown[] } | { error: string };

async function outcome(diff: (emit: (batch: Change[]) => Promise<void>, stats: { missingKey: number; duplicates: number }[]) => Promise<unknown>): Promise<Outcome> {
  const changes: Change[] = [];
  const stats = [0, 1].map(() => ({ missingKey: 0, duplicates: 0 }));
  try {
    return { counts: await diff(async (batch) => void changes.push(...batch), stats), changes, stats };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

const names = { older: keyReader('name'), newer: keyReader('name') };

async function both(older: Buffer, newer: Buffer, sizes: [number, number], changed: boolean) {
  const reference = await outcome((emit, [a, b]) =>
    diffSorted(keyedInOrder(lineBatches(cut(older, sizes[0])), keyReader('k'), a!, 'older'), keyedInOrder(lineBatches(cut(newer, sizes[1])), keyReader('k'), b!, 'newer'), { changed, names }, emit),
  );
  const bytes = await outcome((emit, [a, b]) =>
    diffStored({ bytes: cut(older, sizes[0]), field: 'k', stats: a!, where: 'older' }, { bytes: cut(newer, sizes[1]), field: 'k', stats: b!, where: 'newer' }, { changed, names }, emit),
  );
  return { reference, bytes };
}

describe('diffStored: two stored snapshots merged as bytes', () => {
  it('finds what diffSorted finds over the same files read as lines, whatever the keys, the lines and the chunks', async () => {
    const side = fc.array(record, { maxLength: 20 });
    await fc.assert(
      fc.asyncProperty(side, side, fc.boolean(), fc.boolean(), fc.boolean(), fc.boolean(), fc.tuple(fc.integer({ min: 1, max: 60 }), fc.integer({ min: 1, max: 60 })), async (a, b, sorted, crlf, blanks, changed, sizes) => {
        const { reference, bytes } = await both(sideText(a, sorted, crlf, blanks), sideText(b, true, crlf, blanks), sizes, changed);
        expect(bytes).toEqual(reference);
      }),
      { numRuns: 600 },
    );
  });

  it('finds gained, lost, renamed and changed records across chunks, and leaves out what diffSorted leaves out', async () => {
    const older = sideText([{ key: 'a', name: 'ann', v: 0, form: 'first' }, { key: 'b', name: 'bob', v: 0, form: 'first' }, { key: 'b', name: 'bob', v: 1, form: 'first' }, { key: undefined, name: 'ann', v: 0, form: 'first' }, { key: '😀', name: 'José', v: 0, form: 'escaped' }, { key: '\uFF5E', name: 'ann', v: 0, form: 'last' }], false, true, true);
    const newer = sideText([{ key: 'b', name: 'bob', v: 2, form: 'first' }, { key: 'c', name: 'ann', v: 0, form: 'first' }, { key: '😀', name: 'ann', v: 0, form: 'first' }, { key: '\uFF5E', name: 'ann', v: 0, form: 'spaced' }], true, false, false);
    for (const size of [1, 7, 1 << 16]) {
      const { reference, bytes } = await both(older, newer, [size, size], true);
      expect(bytes).toEqual(reference);
      expect(bytes).toMatchObject({ counts: { gained: 1, lost: 1, renamed: 1, changed: 2, unchanged: 0 }, stats: [{ missingKey: 1, duplicates: 1 }, { missingKey: 0, duplicates: 0 }] });
    }
  });

  it('refuses a side out of key order with diffSorted\'s words, the astral character before U+FF5E as UTF-16 orders them', async () => {
    const older = Buffer.from(['{"k":"\uFF5E"}', '{"k":"😀"}'].join('\n'));
    const { reference, bytes } = await both(older, Buffer.from('{"k":"a"}\n'), [64, 64], false);
    expect(reference).toEqual({ error: 'older is not in key order ("😀" after "～")' });
    expect(bytes).toEqual(reference);
  });

  it('compares as text two lines of one key whose bytes differ: invalid UTF-8 that decodes alike is unchanged, as diffSorted finds', async () => {
    const line = (key: string, value: number[]) => Buffer.concat([Buffer.from(`{"k":"${key}","bio":"`), Buffer.from(value), Buffer.from('"}\n')]);
    const older = Buffer.concat([line('a', [0xff]), line('b', [0xe4, 0xb8, 0xad]), line('中文', [0x41])]);
    const newer = Buffer.concat([line('a', [0xfe]), line('b', [0xe4, 0xb8]), line('中文', [0x42])]);
    for (const size of [1, 5, 64]) {
      const { reference, bytes } = await both(older, newer, [size, size], true);
      expect(bytes).toEqual(reference);
      expect(bytes).toMatchObject({ counts: { gained: 0, lost: 0, renamed: 0, changed: 2, unchanged: 1 } });
    }
  });

  it('names the snapshot of a line it cannot read: one past the longest sgq reads, one that is not a record', async () => {
    const long = Buffer.from(`{"k":"a"}\n{"k":"b","bio":"${'x'.repeat(MAX_LINE_CHARS + 1)}"}\n`);
    const side = (bytes: Buffer, where: string) => ({ bytes: cut(bytes, 1 << 16), field: 'k', stats: { missingKey: 0, duplicates: 0 }, where });
    const diffOf = (older: Buffer) => diffStored(side(older, 'older.ndjson.gz'), side(Buffer.from('{"k":"a"}\n'), 'newer.ndjson.gz'), { changed: false }, async () => undefined);
    await expect(diffOf(long)).rejects.toThrow(/^older\.ndjson\.gz: line 2 is longer than/);
    await expect(diffOf(Buffer.from('{"k":"a"}\n{"k": [1,\n'))).rejects.toThrow(/^older\.ndjson\.gz: /);
  });

  it('stops between chunks once its signal is aborted', async () => {
    const big = Buffer.from(Array.from({ length: 5000 }, (_, i) => `{"k":"u${String(i).padStart(5, '0')}"}\n`).join(''));
    const stop = new AbortController();
    let read = 0;
    const counted = async function* () {
      for await (const chunk of cut(big, 1024)) {
        if (++read === 3) stop.abort(new Error('stopped'));
        yield chunk;
      }
    };
    const side = (bytes: AsyncIterable<Buffer>, where: string) => ({ bytes, field: 'k', stats: { missingKey: 0, duplicates: 0 }, where });
    await expect(diffStored(side(counted(), 'older'), side(cut(big, 1024), 'newer'), { changed: false, signal: stop.signal }, async () => undefined)).rejects.toThrow('stopped');
    expect(read).toBeLessThan(6);
  });
});

describe('diffStored: the order of keys', () => {
  it('orders any keys as their texts are ordered (UTF-16 units): long shared beginnings, astral and BMP characters, escapes', async () => {
    // Beginnings of 5, 6, 11, 12 and 13 characters, so that keys tie on the numbers that hold
    // their first bytes and are told apart past them, or are a prefix of one another.
    const start = fc.constantFrom('', 'f0000', 'f00000', 'f0000000000', 'f00000000000', 'f000000000000', 'ééé', '\uFF5E\uFF5E');
    const key = fc.tuple(start, fc.oneof(fc.string({ maxLength: 4 }), fc.string({ unit: 'binary', maxLength: 3 }), fc.constantFrom('', '0', '1', '😀', '\uFF5E', '\ud800'))).map(([a, b]) => a + b);
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(key, { maxLength: 12 }), fc.uniqueArray(key, { maxLength: 12 }), fc.boolean(), async (a, b, escaped) => {
        const side = (keys: string[]) => Buffer.from(keys.sort(byText).map((k) => `${escaped ? JSON.stringify(k).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) : JSON.stringify(k)}`).map((k) => `{"k":${k}}\n`).join(''));
        const { reference, bytes } = await both(side(a), side(b), [5, 64], false);
        expect(reference).not.toHaveProperty('error');
        expect(bytes).toEqual(reference);
      }),
      { numRuns: 1500 },
    );
  });
});
