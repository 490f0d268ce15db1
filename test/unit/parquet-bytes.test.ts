import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../src/core/classify.js';
import { parseJson } from '../../src/core/json.js';
import { ROW_GROUP, ParquetWriter, type ParquetOptions } from '../../src/parquet/parquet-writer.js';
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
