import { tableFromIPC, type Table } from 'apache-arrow';
import { readFileSync, readdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { readParquet as readWithArrowRs } from 'parquet-wasm';
import { describe, expect, it } from 'vitest';
import { recordColumns, typedColumns } from '../../src/parquet/declared.js';
import { sgq, useSandboxProcess } from '../helpers/e2e.js';
import { tempDir } from '../helpers/run.js';

// DuckDB is not the only reader of sgq's Parquet: Spark, BigQuery, Polars and Arrow have
// readers of their own, some stricter. Here a second, independent one reads what sgq writes:
// arrow-rs, the Rust Parquet of Apache Arrow (compiled to WebAssembly by parquet-wasm), with
// the same types and every value as the NDJSON of the same run.

const sb = useSandboxProcess(['--shape', 'spec']);

/** The file as arrow-rs reads it: column types as Arrow names them, and the table. */
function arrowRead(file: string): { types: Record<string, string>; table: Table } {
  const table = tableFromIPC(readWithArrowRs(readFileSync(file)).intoIPCStream());
  return { types: Object.fromEntries(table.schema.fields.map((f) => [f.name, String(f.type)])), table };
}

/** A column's values as stored: 64-bit integers and timestamps (microseconds) as BigInt, exact. */
function column(table: Table, name: string): unknown[] {
  const out: unknown[] = [];
  for (const batch of table.batches) {
    const vector = batch.getChild(name)!;
    const stored = String(vector.type).startsWith('Timestamp') ? (vector.data[0]!.values as BigInt64Array) : undefined;
    for (let i = 0; i < vector.length; i++) out.push(vector.isValid(i) ? (stored ? stored[vector.data[0]!.offset + i] : vector.get(i)) : null);
  }
  return out;
}

/** The followers' declared columns (every one of them in every file, _unfit last) as Arrow names their types. */
const ARROW: Record<string, string> = { VARCHAR: 'Utf8', BIGINT: 'Int64', 'TIMESTAMP WITH TIME ZONE': 'Timestamp<MICROSECOND, UTC>' };
const followerTypes = (): Record<string, string> => Object.fromEntries(typedColumns(recordColumns('followers')).map((c) => [c.name, ARROW[c.type]!]));

const micros = (iso: string): bigint => {
  const [, whole, fraction = ''] = /^(.*?\d{2}:\d{2}:\d{2})(?:\.(\d+))?(.*)$/.exec(iso)!.slice(0, 3);
  const zone = iso.slice(iso.search(/(Z|[+-]\d{2}:\d{2})$/));
  return BigInt(Date.parse(`${whole}${zone}`)) * 1000n + BigInt(fraction.padEnd(6, '0').slice(0, 6));
};

describe('sgq\'s Parquet read by arrow-rs (parquet-wasm), a reader other than DuckDB', () => {
  it('every type: 64-bit integers exact at both ends, doubles, booleans, UTC timestamps in microseconds, text, nested values as JSON, null apart from ""', async () => {
    const lines = [
      '{"id":1234567890123456789,"score":1.5,"flag":true,"at":"2024-04-07T10:00:00.123456+02:00","user":{"n":[1,2]},"name":"中文 😀\\ttab","huge":123456789012345678901234}',
      '{"id":-9223372036854775808,"score":2,"flag":false,"at":"2024-04-07T23:59:59Z","user":null,"name":"","huge":1}',
      '{"id":9223372036854775807,"score":-0.25,"flag":null,"at":"1969-12-31T23:59:59.5-05:30","user":[],"name":null,"huge":2}',
    ];
    const file = join(tempDir(), 'types.parquet');
    const r = await sgq(['fmt', '-', '-o', 'parquet', '--out', file], { input: `${lines.join('\n')}\n` });
    expect(r.exitCode, r.stderr).toBe(0);
    const { types, table } = arrowRead(file);
    expect(types).toEqual({ id: 'Int64', score: 'Float64', flag: 'Bool', at: 'Timestamp<MICROSECOND, UTC>', user: 'Utf8', name: 'Utf8', huge: 'Utf8' });
    expect(column(table, 'id')).toEqual([1234567890123456789n, -9223372036854775808n, 9223372036854775807n]);
    expect(column(table, 'score')).toEqual([1.5, 2, -0.25]);
    expect(column(table, 'flag')).toEqual([true, false, null]);
    expect(column(table, 'at')).toEqual(['2024-04-07T10:00:00.123456+02:00', '2024-04-07T23:59:59Z', '1969-12-31T23:59:59.5-05:30'].map(micros));
    expect(column(table, 'user')).toEqual(['{"n":[1,2]}', null, '[]']);
    expect(column(table, 'name')).toEqual(['中文 😀\ttab', '', null]);
    expect(column(table, 'huge')).toEqual(['123456789012345678901234', '1', '2']);
  });

  it('an export of several row groups, equal record for record to the NDJSON export', async () => {
    const args = ['graph', 'followers', 'big_25000', '--all'];
    const plain = await sgq([...args, '-o', 'ndjson'], { env: sb.env() });
    expect(plain.exitCode).toBe(0);
    const records = plain.stdout.split('\n').map((l) => JSON.parse(l) as { username: string; last_checked: string });
    const file = join(tempDir(), 'followers.parquet');
    expect((await sgq([...args, '-o', 'parquet', '--out', file], { env: sb.env() })).exitCode).toBe(0);
    const { types, table } = arrowRead(file);
    // Every declared column, those the spec's shape leaves out all null.
    expect(types).toEqual(followerTypes());
    expect(new Set(column(table, 'follower_username'))).toEqual(new Set([null]));
    expect(new Set(column(table, '_unfit'))).toEqual(new Set([null]));
    expect(table.batches.length).toBeGreaterThan(1);
    expect(column(table, 'username')).toEqual(records.map((r) => r.username));
    expect(column(table, 'last_checked')).toEqual(records.map((r) => micros(r.last_checked)));
  });

  it('a --dataset file: the record columns, query_user and fetched_at; route and date only in the path', async () => {
    const dir = tempDir('sgq-dataset-');
    const r = await sgq(['graph', 'followers', 'jack', '--all', '--dataset', dir, '-q'], { env: sb.env() });
    expect(r.exitCode, r.stderr).toBe(0);
    const route = join(realpathSync(join(dir, 'records')), 'route=graph.get_followers');
    const [day] = readdirSync(route);
    const [name] = readdirSync(join(route, day!));
    const { types, table } = arrowRead(join(route, day!, name!));
    expect(types).toEqual({ query_user: 'Utf8', fetched_at: 'Timestamp<MICROSECOND, UTC>', ...followerTypes() });
    expect(table.numRows).toBe(r.stdout.split('\n').length);
    expect(new Set(column(table, 'query_user'))).toEqual(new Set(['jack']));
    expect(new Set(column(table, 'fetched_at')).size).toBe(1);
  });
});
