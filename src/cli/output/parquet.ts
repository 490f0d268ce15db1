import type { JsonObject } from '../../core/classify.js';
import { RawNumber, stringifyJson, type Json } from '../../core/json.js';
import { unionKeys } from './delimited.js';
import { MAX_PRECISION, decimalShape, doubleKeeps, integerOf, numberText, unscaled } from './parquet-numbers.js';
import type { ColumnType } from './parquet-chunk.js';
import { isoMicros, timestampReader, type Micros } from './iso-micros.js';
import { ParquetFile } from './parquet-file.js';
import { parquetLib } from './parquet-lib.js';
import type { Formatter } from './formatter.js';
import type { Sink } from './sink.js';

/** Loads what writing Parquet needs (with this format only). */
export { loadParquetLib as loadParquet } from './parquet-lib.js';

/**
 * Rows per row group. The first group's rows also decide the column types, since a Parquet
 * file states its schema before its data; a group is buffered, so this bounds the memory.
 */
export const ROW_GROUP = 10_000;

interface Column {
  name: string;
  type: ColumnType;
  /** DECIMAL: digits before and after the point. */
  whole?: number;
  scale?: number;
  /** TIMESTAMP: the column's reader of its texts. */
  micros?: (text: string) => Micros | undefined;
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
function inferType(name: string, values: readonly Json[]): Column {
  const present = values.filter((v) => v !== null);
  const as = (type: ColumnType): Column => ({ name, type });
  if (present.length === 0) return as('STRING');
  if (present.every((v) => typeof v === 'boolean')) return as('BOOLEAN');
  if (present.every((v) => int64(v) !== undefined)) return as('INT64');
  if (present.every(fitsDouble)) return as('DOUBLE');
  if (present.every((v) => typeof v === 'string' && isoMicros(v) !== undefined)) return { name, type: 'TIMESTAMP', micros: timestampReader() };
  const shapes = present.map((v) => {
    const text = numberText(v);
    return text === undefined ? undefined : decimalShape(text);
  });
  if (shapes.some((shape) => shape === undefined)) return as('STRING');
  const whole = Math.max(...shapes.map((shape) => shape!.whole));
  const scale = Math.max(...shapes.map((shape) => shape!.scale));
  // Every digit the scale leaves goes before the point, so later rows with larger values fit.
  return scale > 0 && whole + scale <= MAX_PRECISION ? { name, type: 'DECIMAL', whole: MAX_PRECISION - scale, scale } : as('STRING');
}

/** A value as its column stores it; undefined when it does not fit (the column was typed from earlier rows). */
function convert(column: Column, value: Json): unknown {
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
    case 'STRING':
      // Nested values and anything else as JSON text, numbers as sent.
      return typeof value === 'string' ? value : stringifyJson(value);
  }
}

/** The unscaled integer of a number in a DECIMAL column, when the column's digits hold it. */
function decimalValue(column: Column, value: Json): bigint | undefined {
  const text = numberText(value);
  const shape = text === undefined ? undefined : decimalShape(text);
  if (!shape || shape.whole > column.whole! || shape.scale > column.scale!) return undefined;
  return unscaled(text!, column.scale!);
}

function schemaElement({ name, type, whole = 0, scale = 0 }: Column): Record<string, unknown> {
  const optional = { name, repetition_type: 'OPTIONAL' };
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
    case 'STRING':
      return { ...optional, type: 'BYTE_ARRAY', converted_type: 'UTF8' };
  }
}

/** A record's row: each column's value as it stores it; a value that does not fit is null, reported once. */
function addRow(to: ParquetFile, columns: readonly Column[], r: JsonObject, report: (key: string, line: string) => void): void {
  for (let i = 0; i < columns.length; i++) {
    const column = columns[i]!;
    const value = r[column.name];
    let stored: unknown = null;
    if (value !== null && value !== undefined) {
      stored = convert(column, value);
      if (stored === undefined) report(column.name, `parquet: column "${column.name}" holds ${column.type} values; a later value ${stringifyJson(value).slice(0, 40)} does not fit and is written as null`);
    }
    to.column(i).add(stored ?? null);
  }
}

/** Parquet's formatter, and the dataset's way of writing into it (part.ts). */
export interface ParquetFormatter extends Formatter {
  /**
   * Writes records from `from` up to the first that brings a key the columns lack (once the
   * first row group has set them) and returns its index, or `records.length`: a dataset part
   * ends there and the next part takes that record, so the key becomes a column.
   */
  writeFitting(records: readonly JsonObject[], from: number): number;
  /** Parquet never waits: a dataset part (dataset/part.ts) writes and ends it in line. */
  write(records: readonly JsonObject[], lossless?: boolean): void;
  end(): void;
}

/**
 * Parquet, streamed: records are buffered a row group at a time, each group is encoded and
 * handed to the sink, and the footer goes last. The columns and their types come from the
 * first group (or `--fields` for the columns); a key first seen later is left out, and a later
 * value that does not fit its column is written as null, each reported once on stderr.
 */
export function parquetFormatter(sink: Sink, fields: readonly string[] | undefined, warn?: (line: string) => void): ParquetFormatter {
  const lib = parquetLib();
  // The first row group's records, kept until they have typed the columns.
  let first: JsonObject[] | undefined = [];
  let columns: Column[] = [];
  let known = new Set<string>();
  let file: ParquetFile | undefined;
  const reported = new Set<string>();
  const report = (key: string, line: string) => {
    if (reported.has(key)) return;
    reported.add(key);
    warn?.(line);
  };
  const fits = (r: JsonObject): boolean => {
    for (const key in r) if (!known.has(key)) return false;
    return true;
  };
  const reportNewKeys = (r: JsonObject) => {
    for (const key in r) {
      if (!known.has(key)) report(`+${key}`, `parquet: column "${key}" first appeared after the column types were set and is left out; name it in --fields to keep it`);
    }
  };

  const open = (): ParquetFile => {
    const names = fields ?? unionKeys(first!);
    columns = names.map((name) => inferType(name, first!.map((r) => r[name] ?? null)));
    known = new Set(names);
    const schema = [{ name: 'root', num_children: columns.length }, ...columns.map(schemaElement)];
    const opened = new ParquetFile(lib, columns, schema, (bytes) => sink.write(bytes), ROW_GROUP);
    const records = first!;
    first = undefined;
    for (const r of records) {
      // Without --fields the columns are the first group's keys: none of its records brings another.
      if (fields) reportNewKeys(r);
      add(opened, r);
    }
    return opened;
  };

  const add = (to: ParquetFile, r: JsonObject) => {
    addRow(to, columns, r, report);
    if (to.pending >= ROW_GROUP) to.writeGroup();
  };

  const push = (r: JsonObject): void => {
    if (file) return add(file, r);
    first!.push(r);
    if (first!.length >= ROW_GROUP) file = open();
  };

  return {
    // A Parquet file is readable only once its footer is written, at the end.
    holdsUntilEnd: true,
    write(records) {
      for (const r of records) {
        if (file) reportNewKeys(r);
        push(r);
      }
    },
    writeFitting(records, from) {
      for (let i = from; i < records.length; i++) {
        if (file && !fits(records[i]!)) return i;
        push(records[i]!);
      }
      return records.length;
    },
    end() {
      file ??= open();
      file.finish();
    },
  };
}
