import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JsonObject } from '../../src/core/classify.js';
import { parseJson } from '../../src/core/json.js';
import { compareCodePoints } from '../../src/parquet/chunk.js';
import { parquetFormatter } from '../../src/cli/formats/parquet.js';
import { ROW_GROUP } from '../../src/parquet/parquet-writer.js';
import type { Sink } from '../../src/cli/output/sink.js';
import { readParquet, withDuckDb } from '../helpers/duckdb.js';

// sgq's own column encoder (src/parquet/chunk.ts), read back by DuckDB: every
// column type with nulls at every position, dictionaries kept and given up, real-world text.

let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sgq-parquet-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
/** Writes records through the formatter, in pages of `page`, to a new file; returns its path. */
function write(records: readonly JsonObject[], { page = 500, fields }: { page?: number; fields?: string[] } = {}): string {
  const chunks: Uint8Array[] = [];
  const sink = { write: (chunk: Uint8Array | string) => (chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk), true) } as unknown as Sink;
  const formatter = parquetFormatter(sink, { fields });
  for (let i = 0; i < records.length; i += page) formatter.write(records.slice(i, i + page));
  formatter.end();
  const file = join(dir, `f${++files}.parquet`);
  writeFileSync(file, Buffer.concat(chunks));
  return file;
}

/** Each column's encodings, compression and string bounds per row group, as DuckDB's parquet_metadata lists them. */
async function chunks(file: string) {
  return withDuckDb(async (c) => {
    const read = await c.runAndReadAll(`SELECT row_group_id, path_in_schema, encodings, compression, stats_min_value, stats_max_value, stats_null_count FROM parquet_metadata('${file}') ORDER BY row_group_id, column_id`);
    return read.getRowObjects();
  });
}

const records = (text: string): JsonObject[] => text.trim().split('\n').map((l) => parseJson(l) as JsonObject);
/** A record as sgq holds one: parsed from JSON text, so integers past 2^53 keep their digits. */
const record = (fields: Record<string, unknown>): JsonObject =>
  parseJson(`{${Object.entries(fields).map(([k, v]) => `${JSON.stringify(k)}:${typeof v === 'bigint' ? String(v) : JSON.stringify(v)}`).join(',')}}`) as JsonObject;

describe('the column encoder, read back by DuckDB', () => {
  it('writes nulls at every position of every type, across the 8-value groups of the levels', async () => {
    const rows: JsonObject[] = [];
    for (let i = 0; i < 37; i++) {
      const gap = (k: number) => (i * 7 + k) % 5 === 0; // a different null pattern per column
      rows.push(record({
        b: gap(0) ? null : i % 3 === 0,
        n: gap(1) ? null : -(2n ** 62n) + BigInt(i),
        d: gap(2) ? null : i === 4 ? -0.5 : i / 8 - 2,
        t: gap(3) ? null : `2026-11-${String(1 + (i % 28)).padStart(2, '0')}T03:15:00.${String(i).padStart(6, '0')}Z`,
        s: gap(4) ? null : `name ${i}`,
      }));
    }
    const file = write(rows, { page: 5 });
    const { types, rows: back } = await readParquet(file, { asText: true });
    expect(types).toEqual({ b: 'BOOLEAN', n: 'BIGINT', d: 'DOUBLE', t: 'TIMESTAMP WITH TIME ZONE', s: 'VARCHAR' });
    expect(back.map((r) => r.b)).toEqual(rows.map((r) => (r.b === null ? null : String(r.b))));
    expect(back.map((r) => r.n)).toEqual(rows.map((r) => (r.n === null ? null : String(r.n))));
    expect(back.map((r) => (r.d === null ? null : Number(r.d)))).toEqual(rows.map((r) => r.d));
    expect(back.map((r) => r.s)).toEqual(rows.map((r) => r.s));
    const micros = (text: string) => BigInt(Date.parse(text)) * 1000n + BigInt(text.slice(-7, -1)) % 1000n;
    expect((await readParquet(file)).rows.map((r) => r.t)).toEqual(rows.map((r) => (r.t === null ? null : micros(String(r.t)))));
  });

  it('writes INT64 from safe integers and from bigints alike, negatives and timestamps before 1970 too', async () => {
    const ids = ['0', '-1', '9007199254740991', '-9007199254740991', '9007199254740993', '-9223372036854775808', '9223372036854775807', '4294967296', '-4294967297'];
    const times = ['1969-12-31T23:59:59.999999Z', '1970-01-01T00:00:00Z', '0001-01-01T00:00:00Z', '9999-12-31T23:59:59.999999Z', '2026-11-24T16:00:00.000568+00:00'];
    const rows = records(ids.map((id, i) => `{"id":${id},"t":"${times[i % times.length]}"}`).join('\n'));
    const file = write(rows);
    const { types, rows: back } = await readParquet(file, { asText: true });
    expect(types).toEqual({ id: 'BIGINT', t: 'TIMESTAMP WITH TIME ZONE' });
    expect(back.map((r) => r.id)).toEqual(ids);
    const micros = (await readParquet(file)).rows.map((r) => r.t);
    expect(micros.slice(0, 5)).toEqual([-1n, 0n, -62_135_596_800_000_000n, 253_402_300_799_999_999n, 1_795_536_000_000_568n]);
  });

  it('writes a column of one repeated integer, timestamp or decimal as a one-value dictionary', async () => {
    const rows = Array.from({ length: 2500 }, (_, i) => record({ at: '2026-11-24T03:15:00.123456Z', id: 9007199254740993n, d: 0.5, big: i === 7 ? null : 12345678901234567890123n }));
    rows.push(...records('{"at":"2026-11-24T03:15:00.123456Z","id":9007199254740993,"d":0.10000000000000000001,"big":12345678901234567890123}'));
    const file = write(rows);
    const meta = await chunks(file);
    for (const column of ['at', 'id', 'big']) expect(String(meta.find((m) => m.path_in_schema === column)!.encodings), column).toContain('RLE_DICTIONARY');
    const { rows: back } = await readParquet(file, { asText: true });
    expect(new Set(back.map((r) => r.id))).toEqual(new Set(['9007199254740993']));
    expect(back.filter((r) => r.big === null)).toHaveLength(1);
    expect(new Set(back.filter((r) => r.big !== null).map((r) => r.big))).toEqual(new Set(['12345678901234567890123']));
    expect(new Set((await readParquet(file)).rows.map((r) => r.at))).toEqual(new Set([1_795_490_100_123_456n]));
  });

  it('leaves a column uncompressed while compression does not pay, and tries again later', async () => {
    // Random 64-bit values barely shrink; a repeated text shrinks to nothing.
    let seed = 7n;
    const next = () => (seed = (seed * 6364136223846793005n + 1442695040888963407n) % 2n ** 63n);
    const rows = Array.from({ length: ROW_GROUP * 18 }, (_, i) => record({ n: next(), s: i % 2 ? 'a repeated text' : 'another repeated text' }));
    const file = write(rows, { page: 5000 });
    const meta = await chunks(file);
    const codecs = meta.filter((m) => m.path_in_schema === 'n').map((m) => m.compression);
    expect(codecs[0]).toBe('GZIP');
    expect(codecs.slice(1, 16).every((c) => c === 'UNCOMPRESSED')).toBe(true);
    expect(codecs.lastIndexOf('GZIP')).toBeGreaterThan(0);
    expect(meta.filter((m) => m.path_in_schema === 's').every((m) => m.compression === 'GZIP')).toBe(true);
    const { rows: back } = await readParquet(file, { asText: true });
    expect(back.map((r) => r.n)).toEqual(rows.map((r) => String(r.n)));
  });

  it('writes DECIMAL values, negative ones and those past 2^64 unscaled, exactly', async () => {
    const values = ['0.1', '-0.1', '12345678901234567890.123456789', '-98765432109876543210.5', '0.000000000000000001', null];
    const rows = records(values.map((v) => `{"x":${v ?? 'null'}}`).join('\n'));
    const { types, rows: back } = await readParquet(write(rows), { asText: true });
    expect(types.x).toMatch(/^DECIMAL\(38,\d+\)$/);
    const trim = (v: string | null | undefined) => (v == null ? null : v.replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, ''));
    expect(back.map((r) => trim(r.x))).toEqual(values.map((v) => (v === null ? null : trim(v.startsWith('-0.') || v.startsWith('0.') ? v : v))));
  });

  it('keeps a dictionary for a column of few values, with bounds in UTF-8 order, and PLAIN for one of many', async () => {
    // U+E000 sorts before U+1F600 in UTF-8 but after it in UTF-16 code units.
    const few = ['\u{E000}', '😀', 'alice', '東京'];
    const rows = Array.from({ length: 3000 }, (_, i) => ({ user: few[i % few.length]!, name: `follower_${i}` }) as JsonObject);
    const file = write(rows);
    const meta = await chunks(file);
    const user = meta.find((m) => m.path_in_schema === 'user')!;
    const name = meta.find((m) => m.path_in_schema === 'name')!;
    expect(String(user.encodings)).toContain('RLE_DICTIONARY');
    expect([user.stats_min_value, user.stats_max_value]).toEqual(['alice', '😀']);
    expect(String(name.encodings)).not.toContain('DICTIONARY');
    expect(user.compression).toBe('GZIP');
    const { rows: back } = await readParquet(file);
    expect(back).toEqual(rows);
  });

  it('gives a dictionary up when a row group turns out to hold more than half distinct values after a repetitive start', async () => {
    const rows = Array.from({ length: ROW_GROUP }, (_, i) => ({ s: i < 2000 ? `same ${i % 3}` : `unique ${i}` }) as JsonObject);
    const file = write(rows);
    expect(String((await chunks(file))[0]!.encodings)).not.toContain('DICTIONARY');
    expect((await readParquet(file)).rows).toEqual(rows);
  });

  it('round-trips real-world text: CJK, emoji, tabs, newlines, empty strings, a lone surrogate as U+FFFD', async () => {
    const texts = ['東京都渋谷区', '👩‍👩‍👧‍👦 family', 'tab\there', 'line\nbreak', '', 'ok \uD800 lone', 'é'.repeat(5000)];
    const rows = texts.map((s) => ({ s }) as JsonObject);
    const { rows: back } = await readParquet(write(rows));
    expect(back.map((r) => r.s)).toEqual(texts.map((s) => s.replace('\uD800', '\uFFFD')));
  });

  it('writes a column that holds only nulls, and a file of no rows', async () => {
    const { types, rows: back } = await readParquet(write([record({ a: null, b: 1 }), record({ a: null, b: 2 })]));
    expect(types.a).toBe('VARCHAR');
    expect(back).toEqual([{ a: null, b: 1n }, { a: null, b: 2n }]);
    const empty = await readParquet(write([], { fields: ['a'] }));
    expect(empty.rows).toEqual([]);
  });

  it('reads back any mix of strings, integers, booleans and nulls over several row groups (fast-check)', async () => {
    const value = fc.oneof(fc.constant(null), fc.string({ unit: 'grapheme', maxLength: 12 }));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(value, fc.option(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })), fc.option(fc.boolean())), { minLength: 1, maxLength: 60 }), fc.integer({ min: 1, max: 400 }), async (cells, repeat) => {
          const rows: JsonObject[] = [];
          for (let r = 0; r < repeat; r++) for (const [s, n, b] of cells) rows.push(record({ s, n, b }));
          const file = write(rows, { page: 97, fields: ['s', 'n', 'b'] });
          const { rows: back } = await readParquet(file, { asText: true });
          expect(back).toEqual(rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v === null ? null : String(v)]))));
        }),
      { numRuns: 25 },
    );
  });
});

describe('compareCodePoints', () => {
  it('orders as the UTF-8 bytes do', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), (a, b) => {
        expect(Math.sign(compareCodePoints(a, b))).toBe(Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b))));
      }),
    );
  });
});
