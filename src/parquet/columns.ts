import type { SchemaElement } from 'hyparquet';
import type { FieldKind } from '../core/record-fields.js';
import { RawNumber, stringifyJson, type Json } from '../core/json.js';
import { MAX_PRECISION, decimalShape, doubleKeeps, integerOf, numberText, unscaled } from './numbers.js';
import type { ColumnType } from './chunk.js';
import { isoDays, isoMicros, timestampReader, type Micros } from './iso-micros.js';

// A Parquet column of sgq's: its type, how a JSON value is stored in it, and its schema
// element. A route's columns are declared (declaredColumn: from its description of its
// records, the same in every file); a command with no route infers them from the first row
// group (inferType).

export interface Column {
  name: string;
  type: ColumnType;
  /** DECIMAL: digits before and after the point. */
  whole?: number;
  scale?: number;
  /** TIMESTAMP: the column's reader of its texts. */
  micros?: (text: string) => Micros | undefined;
  /** STRING: any value fits, a non-string as its JSON text (a field no description declares, an inferred column). */
  anyValue?: boolean;
}

/**
 * The scale of every declared decimal column: DECIMAL(38, 23). The service's long decimals
 * carry 23 digits after the point (83.12345678901234567890123), which 3.4.1 already typed
 * DECIMAL(38,23); that leaves 15 before it. One type for every file of a route (a double
 * would change those digits, text would not sort or sum); a value with more digits does
 * not fit and is kept in _unfit.
 */
export const DECIMAL_SCALE = 23;

/**
 * The column of a declared field. Integers are BIGINT: ids and counts fit in 64 bits (the
 * service's ids are signed 64-bit) and every reader takes BIGINT natively, where
 * DECIMAL(38,0) would make each count a Decimal object in pandas and a BIGNUMERIC in
 * BigQuery; an integer past 2^63 does not fit and is kept exactly in _unfit.
 */
export function declaredColumn(name: string, kind: FieldKind): Column {
  switch (kind) {
    case 'string':
      return { name, type: 'STRING' };
    case 'integer':
      return { name, type: 'INT64' };
    case 'number':
      return { name, type: 'DECIMAL', whole: MAX_PRECISION - DECIMAL_SCALE, scale: DECIMAL_SCALE };
    case 'datetime':
      return { name, type: 'TIMESTAMP', micros: timestampReader() };
    case 'date':
      return { name, type: 'DATE' };
  }
}

/** A field no description declares: text, strings as they are and any other value as its JSON text. */
export const textColumn = (name: string): Column => ({ name, type: 'STRING', anyValue: true });

/** The type a reader sees, in DuckDB's words: for `dataset info`, `describe --json` and the docs. */
export function sqlType({ type, whole = 0, scale = 0 }: Pick<Column, 'type' | 'whole' | 'scale'>): string {
  const names: Record<ColumnType, string> = { BOOLEAN: 'BOOLEAN', INT64: 'BIGINT', DOUBLE: 'DOUBLE', DECIMAL: `DECIMAL(${whole + scale},${scale})`, TIMESTAMP: 'TIMESTAMP WITH TIME ZONE', DATE: 'DATE', STRING: 'VARCHAR' };
  return names[type];
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** The integer a value holds, when it is one that fits in 64 bits (`1.0` and `2E+3` are integers). */
function int64(value: Json): number | bigint | undefined {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value; // no BigInt for the common case
  let n: bigint | undefined;
  if (typeof value === 'number') n = Number.isInteger(value) ? BigInt(value) : undefined;
  else if (value instanceof RawNumber) n = integerOf(value.text);
  return n !== undefined && n >= INT64_MIN && n <= INT64_MAX ? n : undefined;
}

/** Whether a DOUBLE holds the value as sent: a JS number always does (JSON.parse kept its text). */
const fitsDouble = (value: Json): boolean => typeof value === 'number' || (value instanceof RawNumber && doubleKeeps(value.text));

/**
 * The narrowest type that holds every non-null value of a column exactly. Numbers a double
 * would change make the column a DECIMAL(38, s) when one holds them all and one has a
 * fraction; otherwise (1E400, integers past 64 bits) their text, as sent, in a string.
 */
export function inferType(name: string, values: readonly Json[]): Column {
  const present = values.filter((v) => v !== null);
  const as = (type: ColumnType): Column => ({ name, type });
  if (present.length === 0) return textColumn(name);
  if (present.every((v) => typeof v === 'boolean')) return as('BOOLEAN');
  if (present.every((v) => int64(v) !== undefined)) return as('INT64');
  if (present.every(fitsDouble)) return as('DOUBLE');
  if (present.every((v) => typeof v === 'string' && isoMicros(v) !== undefined)) return { name, type: 'TIMESTAMP', micros: timestampReader() };
  const shapes = present.map((v) => {
    const text = numberText(v);
    return text === undefined ? undefined : decimalShape(text);
  });
  if (shapes.some((shape) => shape === undefined)) return textColumn(name);
  const whole = Math.max(...shapes.map((shape) => shape!.whole));
  const scale = Math.max(...shapes.map((shape) => shape!.scale));
  // Every digit the scale leaves goes before the point, so later rows with larger values fit.
  return scale > 0 && whole + scale <= MAX_PRECISION ? { name, type: 'DECIMAL', whole: MAX_PRECISION - scale, scale } : textColumn(name);
}

/** A value as its column stores it; undefined when it does not fit. */
export function convert(column: Column, value: Json): unknown {
  switch (column.type) {
    case 'BOOLEAN':
      return typeof value === 'boolean' ? value : undefined;
    case 'INT64':
      return int64(value);
    case 'DOUBLE':
      return typeof value === 'number' ? value : value instanceof RawNumber && doubleKeeps(value.text) ? Number(value.text) : undefined;
    case 'DECIMAL':
      return decimalValue(column, value);
    case 'TIMESTAMP':
      return typeof value === 'string' ? column.micros!(value) : undefined;
    case 'DATE':
      return typeof value === 'string' ? isoDays(value) : undefined;
    case 'STRING':
      // Nested values and anything else as JSON text, numbers as sent, where any value fits.
      return typeof value === 'string' ? value : column.anyValue ? stringifyJson(value) : undefined;
  }
}

/** The unscaled integer of a number in a DECIMAL column, when the column's digits hold it. */
function decimalValue(column: Column, value: Json): bigint | undefined {
  const text = numberText(value);
  const shape = text === undefined ? undefined : decimalShape(text);
  if (!shape || shape.whole > column.whole! || shape.scale > column.scale!) return undefined;
  return unscaled(text!, column.scale!);
}

export function schemaElement({ name, type, whole = 0, scale = 0 }: Column): SchemaElement {
  const optional = { name, repetition_type: 'OPTIONAL' } as const;
  switch (type) {
    case 'BOOLEAN':
      return { ...optional, type: 'BOOLEAN' };
    case 'INT64':
      return { ...optional, type: 'INT64' };
    case 'DOUBLE':
      return { ...optional, type: 'DOUBLE' };
    case 'DECIMAL': {
      // 16 bytes hold the unscaled value of any DECIMAL(38).
      const precision = whole + scale;
      return { ...optional, type: 'FIXED_LEN_BYTE_ARRAY', type_length: 16, converted_type: 'DECIMAL', precision, scale, logical_type: { type: 'DECIMAL', precision, scale } };
    }
    case 'TIMESTAMP':
      return { ...optional, type: 'INT64', converted_type: 'TIMESTAMP_MICROS', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MICROS' } };
    case 'DATE':
      return { ...optional, type: 'INT32', converted_type: 'DATE', logical_type: { type: 'DATE' } };
    case 'STRING':
      return { ...optional, type: 'BYTE_ARRAY', converted_type: 'UTF8' };
  }
}
