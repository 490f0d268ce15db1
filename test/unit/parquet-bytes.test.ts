import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../src/core/classify.js';
import { parseJson, type Json } from '../../src/core/json.js';
import { ROW_GROUP, ParquetWriter, type ParquetOptions, type RowConstants } from '../../src/parquet/parquet-writer.js';
import { datasetSchema } from '../../src/core/dataset/schema.js';

// The bytes of sgq's Parquet files, pinned: the page headers, the footer and its statistics
// (bounds of text cut to 16 bytes, a cut maximum rounded up) are sgq's own Thrift since it
// stopped importing hyparquet-writer's internals, and they were checked byte for byte
// against that library's output; these digests are of the files sgq 5.2.0 wrote.

const TEXTS = ['a', 'Berlin', '東京 😀 long enough text here', 'x'.repeat(17), '\ud800 lone', 'ÿ'.repeat(18), '\udbff\udfff'.repeat(5), 'end'];

/** Row i of a mix of every type: ids past 2^53 and 2^64, -0, long decimals, bad timestamps, lone surrogates, late keys. */
function row(i: number): string {
  const at = <T,>(xs: readonly T[], k: number): T => xs[(i * 7 + k) % xs.length]!;
  const fields = [
    `"follower_userid":${at(['1', '9007199254740993', '-5', '18446744073709551616', '2E+3', 'null'], 1)}`,
    `"follower_username":${at([...TEXTS.map((t) => JSON.stringify(t)), 'null', '1.5', '[1,2]'], 2)}`,
    `"follower_last_checked":${at(['"2026-11-20T03:15:00.000001Z"', '"2025-01-01T00:00:00Z"', 'null', '"garbage"'], 3)}`,
    `"ok":${at(['true', 'false', 'null'], 4)}`,
    `"d":${at(['-0', '0', '1.25', '1e300', '-2.5', 'null', '83.12345678901234567890123'], 5)}`,
    '"c":42',
    '"n":null',
    `"day":${at(['"2025-01-31"', '"1969-12-31"', 'null'], 6)}`,
    `"s":${JSON.stringify(at(['u', 'v', 'w'], 0) + (i % 7))}`,
    `"u":${JSON.stringify(`unique ${i} ${TEXTS[i % TEXTS.length]}`)}`,
  ];
  if (i > ROW_GROUP + 3 && i % 97 === 0) fields.push(`"late":${i}`);
  if (i % 13 === 0) fields.push('"_unfit":"theirs"');
  return `{${fields.join(',')}}`;
}

function digest(rows: number, options: ParquetOptions): string {
  const hash = createHash('sha256');
  const writer = new ParquetWriter((bytes) => hash.update(bytes), options);
  writer.write(Array.from({ length: rows }, (_, i) => parseJson(row(i)) as JsonObject));
  writer.close();
  return hash.digest('hex').slice(0, 16);
}

const CASES: [string, number, ParquetOptions][] = [
  ['no records, inferred', 0, {}],
  ['no records, declared', 0, { declared: datasetSchema('graph.get_followers', 'records') }],
  ['one dictionary sample and one more, inferred', 1001, {}],
  ['two row groups and a part, declared', ROW_GROUP * 2 + 123, { declared: datasetSchema('graph.get_followers', 'records') }],
  ['--fields', 999, { fields: ['u', 'd', 'nope', 'follower_userid'] }],
];

describe('the bytes sgq writes', () => {
  for (const [what, rows, options] of CASES) {
    it(what, () => {
      expect(digest(rows, options)).toBe(EXPECTED[what]);
    });
  }
});

/** First 16 hex digits of each file's SHA-256, as sgq 5.2.0 (hyparquet-writer 0.17.0's Thrift) wrote it. */
const EXPECTED: Record<string, string> = {
  'no records, inferred': '7ef691e99e517828',
  'no records, declared': '43552b0ae98918fc',
  'one dictionary sample and one more, inferred': 'ee848cfc4a8e56a6',
  'two row groups and a part, declared': '04585e7a184d14f5',
  '--fields': 'd186c229ae2b13d4',
};

/**
 * Writes `rows` records in batches of `sizes` (cycled), batch k fetched for user k: once with
 * query_user and fetched_at (and on every third batch fetched_since) added to copies of the
 * records, as the dataset wrote them before 5.3.1, and once as RowConstants. `fitting`: through
 * writeFitting, as a dataset's part, each batch from where the last call stopped.
 */
function constantDigests(rows: number, sizes: readonly number[], options: ParquetOptions, fitting: boolean, own?: (i: number) => boolean) {
  const records = Array.from({ length: rows }, (_, i) => parseJson(row(i)) as JsonObject);
  if (own) records.forEach((r, i) => own(i) && (r.query_user = `own ${i}`));
  const batches: { records: JsonObject[]; constants: RowConstants }[] = [];
  for (let at = 0, k = 0; at < rows; k++) {
    const size = sizes[k % sizes.length]!;
    const constants: Record<string, Json> = { query_user: k % 11 === 5 ? null : `user${k}`, fetched_at: '2026-11-29T04:05:06.789Z' };
    if (k % 3 === 2) constants.fetched_since = '2026-11-28T04:00:00Z';
    batches.push({ records: records.slice(at, at + size), constants });
    at += size;
  }
  const stopped: number[][] = [[], []];
  const hashes = [0, 1].map((way) => {
    const hash = createHash('sha256');
    const writer = new ParquetWriter((bytes) => hash.update(bytes), options);
    for (const { records: batch, constants } of batches) {
      const copies = batch.map((r) => Object.assign({ ...r }, ...Object.entries(constants).filter(([key]) => !Object.hasOwn(r, key)).map(([key, value]) => ({ [key]: value }))));
      if (fitting) stopped[way]!.push(way === 0 ? writer.writeFitting(copies, 0) : writer.writeFitting(batch, 0, constants));
      else if (way === 0) writer.write(copies);
      else writer.write(batch, constants);
    }
    writer.close();
    return hash.digest('hex');
  });
  return { hashes, stopped };
}

describe('columns of one value for a write (RowConstants): the bytes of the fields on each record', () => {
  const declared = { declared: datasetSchema('graph.get_followers', 'records') };
  it('declared, batches of a thousand across row groups', () => {
    const { hashes } = constantDigests(ROW_GROUP * 2 + 777, [1000, 999, 1], declared, false);
    expect(hashes[1]).toBe(hashes[0]);
  });
  it('declared, batches of one to three: query_user gives its dictionary up at the sample', () => {
    const { hashes } = constantDigests(3000, [1, 2, 3], declared, false);
    expect(hashes[1]).toBe(hashes[0]);
  });
  it('a record with a query_user of its own keeps it', () => {
    const { hashes } = constantDigests(ROW_GROUP + 500, [700], declared, false, (i) => i % 1000 === 17);
    expect(hashes[1]).toBe(hashes[0]);
  });
  it('inferred columns, and --fields naming one constant', () => {
    expect(constantDigests(ROW_GROUP + 10, [600], {}, false).hashes[1]).toBe(constantDigests(ROW_GROUP + 10, [600], {}, false).hashes[0]);
    const { hashes } = constantDigests(ROW_GROUP + 10, [600], { fields: ['query_user', 'u', 'fetched_at'] }, false);
    expect(hashes[1]).toBe(hashes[0]);
  });
  it('writeFitting stops where a constant first brings a key (fetched_since after the first row group)', () => {
    const { hashes, stopped } = constantDigests(ROW_GROUP + 4000, [6000, 5000, 3000], declared, true);
    expect(stopped[1]).toEqual(stopped[0]);
    expect(stopped[0]!.some((at) => at === 0)).toBe(true);
    expect(hashes[1]).toBe(hashes[0]);
  });
});

/**
 * Record i of the service's shape (its fields in its order, ids past 2^53, instants with an
 * offset), now and then its keys in another order, a key missing, a value that does not fit
 * (an id past 2^63, an instant with a bad day) or a `_unfit` of its own: the paths a
 * dataset's rows take through the writer, whatever order a record's keys come in.
 */
function serviceRow(i: number): string {
  const at = <T,>(xs: readonly T[]): T => xs[i % xs.length]!;
  const fields: [string, string][] = [
    ['follower_username', JSON.stringify(`name_${i}`)],
    ['follower_userid', i % 401 === 7 ? '18446744073709551617' : String(1308823108600000000n + BigInt(i) * 7919n)],
    ['follower_list_name', at(['"Анна Петрова"', '"Zoë Lambert"', '""', 'null', `"only ${i}"`])],
    ['follower_bio', at(['""', '"line one\\nline two"', 'null', '"फ़ोटोग्राफ़र"'])],
    ['follower_location', at(['null', '"القاهرة"', '"Berlin"'])],
    ['follower_website', at(['null', '"https://example.com"'])],
    ['follower_num_followers', String((i * 7919) % 200_000)],
    ['follower_num_friends', String(i % 1566)],
    ['follower_num_tweets', i % 503 === 11 ? '1.5' : String(i * 3)],
    ['follower_last_tweet', i % 5 === 0 ? 'null' : `"2024-08-${String(1 + (i % 28)).padStart(2, '0')}T17:35:00.000000+00:00"`],
    ['follower_creation_date', i % 307 === 3 ? '"2015-02-30T15:45:00.000000+00:00"' : '"2015-10-16T15:45:00.000000+00:00"'],
    ['follower_last_checked', `"2026-11-29T09:${String(i % 60).padStart(2, '0')}:38.${String(i % 1_000_000).padStart(6, '0')}+00:00"`],
  ];
  if (i % 97 === 5) fields.reverse();
  if (i % 89 === 6) fields.splice(3, 1);
  if (i % 211 === 9) fields.push(['_unfit', '"theirs"']);
  return `{${fields.map(([k, v]) => `"${k}":${v}`).join(',')}}`;
}

describe("the bytes of a dataset's parts, pinned (sgq 5.3.2 wrote them)", () => {
  it('pages of the service records with their constants, through writeFitting, over several row groups', () => {
    const hash = createHash('sha256');
    const writer = new ParquetWriter((bytes) => hash.update(bytes), { declared: datasetSchema('graph.get_followers', 'records') });
    const records = Array.from({ length: ROW_GROUP * 2 + 1234 }, (_, i) => parseJson(serviceRow(i)) as JsonObject);
    for (let at = 0, k = 0; at < records.length; at += 500, k++) {
      const page = records.slice(at, at + 500);
      expect(writer.writeFitting(page, 0, { query_user: `user${k % 7}`, fetched_at: '2026-11-29T04:05:06.789Z' })).toBe(page.length);
    }
    writer.close();
    expect(hash.digest('hex').slice(0, 16)).toBe('1bbc09203153d89e');
  });
});
