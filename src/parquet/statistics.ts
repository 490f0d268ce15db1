import type { SchemaElement, Statistics } from 'hyparquet';
import type { ThriftStruct } from './thrift.js';

// A column chunk's statistics as the footer stores them: each bound as the bytes of its
// column's type (little-endian numbers, a DECIMAL's big-endian two's complement, text as
// UTF-8), a bound of text cut to 16 bytes (a cut maximum rounded up, so it still bounds).
// Bounds come from sgq's writer (numbers, bigints, strings) or from a file sgq wrote before,
// read back raw by compaction (bigints, bytes; a DATE as a Date).
// It follows hyparquet-writer 0.17.0's code byte for byte (MIT: NOTICE-hyparquet-writer.txt).

/** Bytes a bound of text keeps. */
const CUT = 16;
const DAY_MS = 86_400_000;

export function statisticsStruct(stats: Statistics, element: SchemaElement): ThriftStruct {
  return {
    1: boundBytes(stats.max, element, true),
    2: boundBytes(stats.min, element, false),
    3: stats.null_count,
    4: stats.distinct_count,
    5: boundBytes(stats.max_value, element, true),
    6: boundBytes(stats.min_value, element, false),
    7: stats.is_max_value_exact ?? exactness(stats.max_value ?? stats.max, element, true),
    8: stats.is_min_value_exact ?? exactness(stats.min_value ?? stats.min, element, false),
    9: (stats as { nan_count?: bigint }).nan_count,
  };
}

type Bound = Statistics['min'];

function boundBytes(value: Bound, element: SchemaElement, isMax: boolean): Uint8Array | undefined {
  if (value === undefined || value === null) return undefined;
  const { type, converted_type: converted } = element;
  if (type === 'BOOLEAN') return new Uint8Array([value ? 1 : 0]);
  if (element.logical_type?.type === 'UUID' || element.logical_type?.type === 'FLOAT16') throw new Error(`statistics of ${element.logical_type.type}: not a column sgq writes`);
  if (converted === 'DECIMAL') return decimalBound(value, element);
  if (type === 'BYTE_ARRAY' || type === 'FIXED_LEN_BYTE_ARRAY') return cut(textBytes(value), element, isMax);
  const number = fixedBound(value, element);
  if (number) return number;
  throw new Error(`statistics of ${type} with the value ${String(value)}: not a column sgq writes`);
}

/** A bound of a number type, little-endian (a DATE read back as a Date: its days; a timestamp as a Date: in the column's unit). */
function fixedBound(value: Exclude<Bound, undefined>, { type, converted_type: converted, logical_type: logical }: SchemaElement): Uint8Array | undefined {
  const bytes = new Uint8Array(type === 'INT32' || type === 'FLOAT' ? 4 : 8);
  const view = new DataView(bytes.buffer);
  if (type === 'FLOAT' && typeof value === 'number') view.setFloat32(0, value, true);
  else if (type === 'DOUBLE' && typeof value === 'number') view.setFloat64(0, value, true);
  else if (type === 'INT32' && typeof value === 'number') view.setInt32(0, value, true);
  else if (type === 'INT64' && (typeof value === 'bigint' || (typeof value === 'number' && Number.isInteger(value)))) view.setBigInt64(0, BigInt(value), true);
  else if (type === 'INT32' && converted === 'DATE' && value instanceof Date) view.setInt32(0, Math.floor(value.getTime() / DAY_MS), true);
  else if (type === 'INT64' && value instanceof Date) {
    const unit = converted === 'TIMESTAMP_MILLIS' ? 'MILLIS' : converted === 'TIMESTAMP_MICROS' ? 'MICROS' : logical?.type === 'TIMESTAMP' ? logical.unit : undefined;
    if (!unit) return undefined;
    view.setBigInt64(0, BigInt(value.getTime()) * (unit === 'NANOS' ? 1_000_000n : unit === 'MICROS' ? 1_000n : 1n), true);
  } else return undefined;
  return bytes;
}

/** A DECIMAL bound: the unscaled value (a number is scaled first), in the column's physical type. */
function decimalBound(value: Exclude<Bound, undefined>, element: SchemaElement): Uint8Array {
  if (typeof value !== 'number' && typeof value !== 'bigint') throw new Error('DECIMAL must be a number or bigint');
  const scaled = typeof value === 'bigint' ? value : BigInt(Math.round(value * 10 ** (element.scale || 0)));
  const { type, type_length: length } = element;
  if (type === 'INT32' || type === 'INT64') {
    const bytes = new Uint8Array(type === 'INT32' ? 4 : 8);
    const view = new DataView(bytes.buffer);
    if (type === 'INT32') view.setInt32(0, Number(scaled), true);
    else view.setBigInt64(0, scaled, true);
    return bytes;
  }
  if (type === 'FIXED_LEN_BYTE_ARRAY' && !length) throw new Error('fixed length byte array type_length is required');
  return twosComplement(scaled, length);
}

/** Big-endian two's complement: `length` bytes, or (none) the fewest that keep the sign. */
function twosComplement(value: bigint, length: number | undefined): Uint8Array {
  if (!length && !value) return new Uint8Array();
  const bytes: number[] = [];
  for (;;) {
    const byte = Number(value & 0xffn);
    bytes.unshift(byte);
    value >>= 8n;
    if (length ? bytes.length >= length : ((byte & 0x80) === 0 && value === 0n) || ((byte & 0x80) !== 0 && value === -1n)) break;
  }
  return new Uint8Array(bytes);
}

const textBytes = (value: Exclude<Bound, undefined>): Uint8Array => (value instanceof Uint8Array ? value : new TextEncoder().encode(value.toString()));

/** False when a bound had to be cut; undefined (exact, the default) otherwise. */
function exactness(value: Bound, element: SchemaElement, isMax: boolean): false | undefined {
  if (value === undefined || value === null || !cuttable(element)) return undefined;
  const bytes = textBytes(value);
  return cut(bytes, element, isMax) === bytes ? undefined : false;
}

/** Text and bytes of any length; a FIXED_LEN_BYTE_ARRAY keeps its length, JSON and BSON their whole. */
function cuttable({ type, converted_type: converted, logical_type: logical }: SchemaElement): boolean {
  if (type !== 'BYTE_ARRAY') return false;
  if (converted === 'DECIMAL' || converted === 'JSON' || converted === 'BSON') return false;
  return logical?.type !== 'JSON' && logical?.type !== 'BSON';
}

/** The bound cut to CUT bytes, or the bytes themselves (the same array) when they are short, cannot be cut, or no shorter maximum bounds them. */
function cut(bytes: Uint8Array, element: SchemaElement, isMax: boolean): Uint8Array {
  if (bytes.length <= CUT || !cuttable(element)) return bytes;
  const { converted_type: converted, logical_type: logical } = element;
  const utf8 = converted === 'UTF8' || converted === 'ENUM' || logical?.type === 'STRING' || logical?.type === 'ENUM';
  return (utf8 ? cutText(bytes, isMax) : cutBytes(bytes, isMax)) ?? bytes;
}

/** Byte-wise: a minimum's prefix; a maximum's with its last byte below 0xFF raised by one (trailing 0xFF dropped). */
function cutBytes(bytes: Uint8Array, isMax: boolean): Uint8Array | undefined {
  const prefix = new Uint8Array(bytes.subarray(0, CUT));
  if (!isMax) return prefix;
  let i = prefix.length - 1;
  while (i >= 0 && prefix[i] === 0xff) i--;
  if (i < 0) return undefined;
  const rounded = prefix.slice(0, i + 1);
  rounded[i]! += 1;
  return rounded;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** On a code point boundary: a maximum's last code point that has a successor fitting is raised by one (surrogates skipped). */
function cutText(bytes: Uint8Array, isMax: boolean): Uint8Array | undefined {
  let end = CUT;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  if (!isMax) return new Uint8Array(bytes.subarray(0, end));
  let text: string;
  try {
    text = strictUtf8.decode(bytes.subarray(0, end));
  } catch {
    return cutBytes(bytes, isMax);
  }
  const codePoints = Array.from(text, (c) => c.codePointAt(0) ?? 0);
  for (let i = codePoints.length - 1; i >= 0; i--) {
    end--;
    while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
    const code = codePoints[i]!;
    if (code === 0x10ffff) continue;
    const suffix = new TextEncoder().encode(String.fromCodePoint(code === 0xd7ff ? 0xe000 : code + 1));
    if (end + suffix.length > CUT) continue;
    const rounded = new Uint8Array(end + suffix.length);
    rounded.set(bytes.subarray(0, end));
    rounded.set(suffix, end);
    return rounded;
  }
  return undefined;
}
