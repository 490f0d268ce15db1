import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { FileMetaData, SchemaElement } from 'hyparquet';
import type { JsonObject } from '../classify.js';
import { RawNumber, parseJson, type Json } from '../json.js';
import type { FieldKind } from '../record-fields.js';
import { closeTemp, createTemp, discardTemp, sealTemp, writeAll } from '../../fs/atomic.js';
import { daysIso, microsIso } from '../../parquet/iso-micros.js';
import { ParquetWriter } from '../../parquet/parquet-writer.js';
import { UNFIT, type Declared } from '../../parquet/declared.js';
import type { DatasetLayout } from './layout.js';
import type { PartFile } from './part-file.js';

// A file of an older sgq rewritten in its route's declared columns (`dataset compact`): each
// value is read back exactly as it was stored (decimals from their bytes, timestamps in
// microseconds, integers as bigints) and written again by the writer of every run, so it
// lands in its declared column, or in _unfit when that column's type cannot hold it.

/** Writes the rewritten file under the dataset's staging folder, flushed to disk; returns its temporary path and rows. */
export async function rewritePart(part: PartFile, declared: readonly Declared[], layout: DatasetLayout, warn: (line: string) => void): Promise<{ temp: string; rows: number }> {
  const { asyncBufferFromFile, parquetReadObjects } = await import('hyparquet');
  const { file: mode } = layout.modes;
  const temp = createTemp(join(layout.staging, 'rewrite.parquet'), mode);
  try {
    const fd = temp.fd;
    const parquet = new ParquetWriter((bytes) => writeAll(fd, bytes), { declared, warn });
    const file = await asyncBufferFromFile(part.path);
    const metadata = storedValues(part.metadata);
    const kinds = new Map(declared.map((d) => [d.name, d.kind]));
    const columns = part.schema.slice(1);
    let start = 0;
    for (const group of part.metadata.row_groups) {
      const end = start + Number(group.num_rows);
      const rows = await parquetReadObjects({ file, metadata, rowStart: start, rowEnd: end, parsers: STORED, utf8: true, compressors: GZIP });
      parquet.write(rows.map((row) => recordOf(row, columns, kinds)));
      start = end;
    }
    parquet.close();
    sealTemp(fd, { mode });
    closeTemp(temp);
    return { temp: temp.path, rows: start };
  } catch (error) {
    discardTemp(temp);
    throw error;
  }
}

/** sgq writes GZIP pages (src/parquet/chunk.ts), which the reader leaves to its caller. */
const GZIP = { GZIP: (input: Uint8Array) => new Uint8Array(gunzipSync(input)) };

/** Timestamps as their microseconds and days as their count, not as Dates (which would drop microseconds). */
const STORED = { timestampFromMicroseconds: (micros: bigint) => micros, dateFromDays: (days: number) => days };

/** The footer with DECIMAL columns read as their bytes: the reader would turn them into doubles. */
function storedValues(metadata: FileMetaData): FileMetaData {
  const schema = metadata.schema.map((e) => (isDecimal(e) ? { ...e, converted_type: undefined, logical_type: undefined } : e));
  return { ...metadata, schema };
}

/** A stored row as the record it was: each column's value as JSON, and the fields an `_unfit` kept back in place. */
function recordOf(row: Record<string, unknown>, columns: readonly SchemaElement[], kinds: ReadonlyMap<string, FieldKind>): JsonObject {
  const record: JsonObject = {};
  for (const element of columns) {
    const stored = row[element.name];
    if (element.name === UNFIT) continue;
    Object.defineProperty(record, element.name, { value: jsonOf(stored, element, kinds.get(element.name)), enumerable: true, writable: true, configurable: true });
  }
  const unfit = row[UNFIT];
  if (typeof unfit !== 'string') return record;
  const kept = parseJson(unfit) as JsonObject;
  for (const key of Object.keys(kept)) Object.defineProperty(record, key, { value: kept[key], enumerable: true, writable: true, configurable: true });
  return record;
}

/**
 * A stored value as the JSON value it was sent as. Text is text, except where the route
 * declares a number: 3.x stored a number its column could not type as its text, as sent.
 */
function jsonOf(stored: unknown, element: SchemaElement, kind: FieldKind | undefined): Json {
  if (stored === null || stored === undefined) return null;
  const { converted_type: converted, logical_type: logical } = element;
  if (isDecimal(element)) return new RawNumber(decimalText(unscaledOf(stored), element.scale ?? 0));
  if (typeof stored === 'bigint') {
    if (converted === 'TIMESTAMP_MICROS' || logical?.type === 'TIMESTAMP') return microsIso(stored);
    return Number.isSafeInteger(Number(stored)) ? Number(stored) : new RawNumber(String(stored));
  }
  if (typeof stored === 'number' && (converted === 'DATE' || logical?.type === 'DATE')) return daysIso(stored);
  if (typeof stored === 'string' && (kind === 'integer' || kind === 'number') && NUMBER_TOKEN.test(stored)) return numberOf(stored);
  return stored as Json;
}

const NUMBER_TOKEN = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

/** A number token as the core parses one: a JS number where that keeps it, else its text. */
const numberOf = (text: string): Json => parseJson(text) as Json;

const isDecimal = (e: SchemaElement): boolean => e.converted_type === 'DECIMAL' || e.logical_type?.type === 'DECIMAL';

/** A DECIMAL's unscaled value: big-endian two's complement bytes (sgq's), or an integer (INT32, INT64). */
function unscaledOf(stored: unknown): bigint {
  if (!(stored instanceof Uint8Array)) return BigInt(stored as number | bigint);
  let n = 0n;
  for (const byte of stored) n = (n << 8n) | BigInt(byte);
  return stored.length > 0 && stored[0]! & 0x80 ? n - (1n << BigInt(stored.length * 8)) : n;
}

/** The decimal text of an unscaled value at `scale` digits after the point. */
function decimalText(n: bigint, scale: number): string {
  const digits = (n < 0n ? -n : n).toString().padStart(scale + 1, '0');
  const text = scale > 0 ? `${digits.slice(0, -scale)}.${digits.slice(-scale)}` : digits;
  return n < 0n ? `-${text}` : text;
}
