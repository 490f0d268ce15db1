import type { SchemaElement } from 'hyparquet';
import { declaredColumn, sqlType } from '../../parquet/columns.js';
import { UNFIT, type Declared } from '../../parquet/declared.js';

// Whether a dataset file has its route's declared columns (schema.ts) with their types, as
// every file sgq writes now has: files of an older sgq (3.x typed each file's columns from
// its own values) may not. `dataset info` names those; `dataset compact` rewrites them.

/** A column's type in a file, in DuckDB's words (what `dataset info --schema` shows). */
export function fileType(element: SchemaElement): string {
  const { type, converted_type: converted, logical_type: logical, precision, scale } = element;
  if (converted === 'DECIMAL' || logical?.type === 'DECIMAL') return `DECIMAL(${precision},${scale ?? 0})`;
  if (type === 'INT64' && (converted === 'TIMESTAMP_MICROS' || logical?.type === 'TIMESTAMP')) return logical?.type === 'TIMESTAMP' && !logical.isAdjustedToUTC ? 'TIMESTAMP' : 'TIMESTAMP WITH TIME ZONE';
  if (type === 'INT32' && (converted === 'DATE' || logical?.type === 'DATE')) return 'DATE';
  if (type === 'BYTE_ARRAY' && (converted === 'UTF8' || logical?.type === 'STRING')) return 'VARCHAR';
  const plain: Record<string, string> = { BOOLEAN: 'BOOLEAN', INT32: 'INTEGER', INT64: 'BIGINT', FLOAT: 'FLOAT', DOUBLE: 'DOUBLE', BYTE_ARRAY: 'BLOB' };
  return plain[type ?? ''] ?? String(type);
}

/** The type each declared column must have, `_unfit` included: by name. */
export function expectedTypes(declared: readonly Declared[]): Map<string, string> {
  const types = new Map(declared.map((d) => [d.name, sqlType(declaredColumn(d.name, d.kind))]));
  types.set(UNFIT, 'VARCHAR');
  return types;
}

/**
 * How a file's columns differ from the declared ones, in words (the first difference), or
 * undefined when they do not: each declared column there with its type, `_unfit` there, and
 * every other column text.
 */
export function difference(schema: readonly SchemaElement[], declared: readonly Declared[]): string | undefined {
  const columns = new Map(schema.slice(1).map((element) => [element.name, fileType(element)]));
  const expected = expectedTypes(declared);
  for (const [name, type] of expected) {
    const found = columns.get(name);
    if (found === undefined) return `lacks the column ${name}`;
    if (found !== type) return `${name} is ${found}, not ${type}`;
  }
  for (const [name, type] of columns) {
    if (!expected.has(name) && type !== 'VARCHAR') return `${name} is ${type}, not VARCHAR (the type of a field the route does not declare)`;
  }
  return undefined;
}
