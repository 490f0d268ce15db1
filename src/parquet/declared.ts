import { RECORD_FIELDS, type FieldKind, type FieldSpecs, type RecordsName } from '../core/record-fields.js';
import { declaredColumn, sqlType } from './columns.js';

// The Parquet columns of a route's records, declared from the one description of its fields
// (src/core/record-fields.ts): every file of a route has each of them with the same type,
// whatever one file's values are (all null one night, long decimals the next). `-o parquet`
// of a route and `--dataset` write them; `describe --json` and docs/dataset.md print them.

/** A column every file of a route has. */
export interface Declared {
  name: string;
  kind: FieldKind;
  description: string;
}

/**
 * The column of every declared file that keeps what no other column can, exactly, as one JSON
 * object per row (null when nothing was left over): a value that does not fit its column's
 * type (an id past 2^63, a decimal of 24 digits after the point), a field first seen after the
 * columns were set (-o parquet). Always there, so no file lacks it.
 */
export const UNFIT = '_unfit';
export const UNFIT_DESCRIPTION = "what did not fit the row's other columns, as a JSON object of exact values (null when nothing)";

export const QUERY_USER: Declared = { name: 'query_user', kind: 'string', description: 'the account the record was fetched for (null for routes without one)' };

/** The declared fields of a kind of record, in the description's order. */
export function recordColumns(records: RecordsName): Declared[] {
  return Object.entries(RECORD_FIELDS[records] as FieldSpecs).map(([name, spec]) => ({ name, kind: spec.kind, description: spec.description }));
}

/** The columns of `-o parquet` for a route's records: query_user first where the run tags each record with it. */
export const outputSchema = (records: RecordsName, queryUser: boolean): Declared[] => [...(queryUser ? [QUERY_USER] : []), ...recordColumns(records)];

/** Each column's name and type as readers see it (DuckDB's words), `_unfit` last: for describe and the docs. */
export function typedColumns(columns: readonly Declared[]): { name: string; type: string; description: string }[] {
  return [...columns.map(({ name, kind, description }) => ({ name, type: sqlType(declaredColumn(name, kind)), description })), { name: UNFIT, type: 'VARCHAR', description: UNFIT_DESCRIPTION }];
}
