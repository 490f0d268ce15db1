import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JsonObject } from '../../src/core/classify.js';
import { parseJson } from '../../src/core/json.js';
import { parquetFormatter } from '../../src/cli/formats/parquet.js';
import { ROW_GROUP } from '../../src/parquet/parquet-writer.js';
import { outputSchema, typedColumns, type Declared } from '../../src/parquet/declared.js';
import type { Sink } from '../../src/cli/output/sink.js';
import { readParquet } from '../helpers/duckdb.js';

// Parquet in a route's declared columns: the same types whatever the values, every value
// exact (in its column, or in _unfit when its column's type cannot hold it).

let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sgq-declared-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const DECLARED: Declared[] = [
  { name: 'name', kind: 'string', description: '' },
  { name: 'id', kind: 'integer', description: '' },
  { name: 'score', kind: 'number', description: '' },
  { name: 'seen', kind: 'datetime', description: '' },
  { name: 'day', kind: 'date', description: '' },
];

let files = 0;
/** Writes NDJSON lines through the formatter (declared columns), in pages of 500; the file and the warnings. */
function write(lines: readonly string[], options: { fields?: string[]; declared?: Declared[] } = {}) {
  const chunks: Uint8Array[] = [];
  const warnings: string[] = [];
  const sink = { write: (chunk: Uint8Array | string) => (chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk), true) } as unknown as Sink;
  const formatter = parquetFormatter(sink, { declared: options.declared ?? DECLARED, fields: options.fields, warn: (line) => warnings.push(line) });
  const records = lines.map((line) => parseJson(line) as JsonObject);
  for (let i = 0; i < records.length; i += 500) formatter.write(records.slice(i, i + 500));
  formatter.end();
  const file = join(dir, `f${++files}.parquet`);
  writeFileSync(file, Buffer.concat(chunks));
  return { file, warnings };
}

const TYPES = { name: 'VARCHAR', id: 'BIGINT', score: 'DECIMAL(38,23)', seen: 'TIMESTAMP WITH TIME ZONE', day: 'DATE', _unfit: 'VARCHAR' };

describe('declared columns', () => {
  it('type every declared column by its kind, in a file whose values are all null or absent too', async () => {
    const empty = await readParquet(write(['{"name":null}', '{}']).file, { asText: true });
    expect(empty.types).toEqual(TYPES);
    expect(empty.rows).toEqual([
      { name: null, id: null, score: null, seen: null, day: null, _unfit: null },
      { name: null, id: null, score: null, seen: null, day: null, _unfit: null },
    ]);
    const none = await readParquet(write([]).file, { asText: true });
    expect(none.types).toEqual(TYPES);
  });

  it('keep every value exact in its column: integers as sent in any spelling, long decimals, instants, days', async () => {
    const { file, warnings } = write([
      '{"name":"東京 🐈","id":9223372036854775807,"score":83.12345678901234567890123,"seen":"2025-03-01T09:00:00.000001+09:00","day":"2024-02-29"}',
      '{"name":"x","id":1.0,"score":-0,"seen":"2025-03-01T00:00:00Z","day":"1970-01-01"}',
      '{"name":"y","id":-9223372036854775808,"score":2E+3,"seen":null,"day":null}',
      '{"name":"z","id":2E+3,"score":999999999999999.99999999999999999999999}',
    ]);
    expect(warnings).toEqual([]);
    const { types, rows } = await readParquet(file, { asText: true });
    expect(types).toEqual(TYPES);
    expect(rows).toEqual([
      { name: '東京 🐈', id: '9223372036854775807', score: '83.12345678901234567890123', seen: '2025-03-01 00:00:00.000001+00', day: '2024-02-29', _unfit: null },
      { name: 'x', id: '1', score: '0.00000000000000000000000', seen: '2025-03-01 00:00:00+00', day: '1970-01-01', _unfit: null },
      { name: 'y', id: '-9223372036854775808', score: '2000.00000000000000000000000', seen: null, day: null, _unfit: null },
      { name: 'z', id: '2000', score: '999999999999999.99999999999999999999999', seen: null, day: null, _unfit: null },
    ]);
  });

  it('keep a value its column cannot hold exactly in _unfit, as sent, and say so once', async () => {
    const { file, warnings } = write([
      '{"name":"a","id":9223372036854775808,"score":0.123456789012345678901234}',
      '{"name":"b","id":-9223372036854775809,"score":1234567890123456}',
      '{"name":"c","id":"12","score":"1.5","seen":"yesterday","day":"2024-02-30"}',
      '{"name":7,"id":1.5,"score":1E400,"seen":"2025-03-01T00:00:00.0000001Z","day":"2024-01-01T00:00:00Z"}',
      '{"name":{"nested":[1,2]},"id":true,"seen":"2025-03-01T00:00:00"}',
    ]);
    expect(warnings).toEqual([expect.stringMatching(/^parquet: id 9223372036854775808 does not fit its column \(BIGINT\): kept exactly in the column _unfit, as JSON; later values that do not fit are not reported$/)]);
    const { rows } = await readParquet(file, { asText: true });
    expect(rows.map((r) => [r.name, r.id, r.score, r.seen, r.day, r._unfit])).toEqual([
      ['a', null, null, null, null, '{"id":9223372036854775808,"score":0.123456789012345678901234}'],
      ['b', null, null, null, null, '{"id":-9223372036854775809,"score":1234567890123456}'],
      ['c', null, null, null, null, '{"id":"12","score":"1.5","seen":"yesterday","day":"2024-02-30"}'],
      [null, null, null, null, null, '{"name":7,"id":1.5,"score":1E400,"seen":"2025-03-01T00:00:00.0000001Z","day":"2024-01-01T00:00:00Z"}'],
      [null, null, null, null, null, '{"name":{"nested":[1,2]},"id":true,"seen":"2025-03-01T00:00:00"}'],
    ]);
  });

  it('a field no description declares is text (strings as they are, other values as JSON), after _unfit: every file begins with the same columns', async () => {
    const { file } = write(['{"name":"a","verified":true,"extra":{"a":1.50},"note":"plain"}', '{"name":"b","verified":"yes","note":12345678901234567890123}']);
    const { types, rows } = await readParquet(file, { asText: true });
    expect(Object.entries(types)).toEqual([...Object.entries(TYPES), ['verified', 'VARCHAR'], ['extra', 'VARCHAR'], ['note', 'VARCHAR']]);
    expect(rows.map((r) => [r.verified, r.extra, r.note])).toEqual([
      ['true', '{"a":1.50}', 'plain'],
      ['yes', null, '12345678901234567890123'],
    ]);
  });

  it('a field first seen after the first row group goes to _unfit (said once); a record of its own _unfit is kept inside sgq\'s', async () => {
    const lines = Array.from({ length: ROW_GROUP + 3 }, (_, i) => `{"name":"u${i}"}`);
    lines[ROW_GROUP + 1] = '{"name":"late","late":[1,2.50],"_unfit":"theirs"}';
    lines[ROW_GROUP + 2] = '{"name":"later","late":3}';
    const { file, warnings } = write(lines);
    expect(warnings).toEqual([
      'parquet: the field "late" first appeared after the columns were set: kept exactly in the column _unfit, as JSON',
      'parquet: the field "_unfit" first appeared after the columns were set: kept exactly in the column _unfit, as JSON',
    ]);
    const { types, rows } = await readParquet(file, { asText: true });
    expect(types).toEqual(TYPES);
    expect(rows.slice(-2).map((r) => [r.name, r._unfit])).toEqual([
      ['late', '{"late":[1,2.50],"_unfit":"theirs"}'],
      ['later', '{"late":3}'],
    ]);
  });

  it('--fields: those columns in that order, declared ones typed, then _unfit', async () => {
    const { file } = write(['{"seen":"2025-03-01T00:00:00Z","other":1,"id":5}'], { fields: ['id', 'other', 'seen'] });
    const { types, rows } = await readParquet(file, { asText: true });
    expect(Object.entries(types)).toEqual([['id', 'BIGINT'], ['other', 'VARCHAR'], ['seen', 'TIMESTAMP WITH TIME ZONE'], ['_unfit', 'VARCHAR']]);
    expect(rows).toEqual([{ id: '5', other: '1', seen: '2025-03-01 00:00:00+00', _unfit: null }]);
  });

  it('a route\'s columns: query_user first where the run tags records, every declared field, _unfit last', () => {
    expect(outputSchema('scores', true).map((c) => c.name)).toEqual(['query_user', 'date', 'score']);
    expect(typedColumns(outputSchema('scores', false)).map((c) => [c.name, c.type])).toEqual([['date', 'DATE'], ['score', 'DECIMAL(38,23)'], ['_unfit', 'VARCHAR']]);
    expect(typedColumns(outputSchema('open', false)).map((c) => c.name)).toEqual(['_unfit']);
  });
});
