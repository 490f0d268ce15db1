import type { Bytes } from './byte-buffer.js';

// Thrift's compact protocol, the encoding of Parquet's page headers and footer, for the
// values sgq writes: a struct is an object whose keys are its field ids, each value's
// Thrift type follows from its JS type (an integer number is an i32, a bigint an i64, a
// fractional number a double), and an undefined field is left out.
// It follows hyparquet-writer 0.17.0's code byte for byte (MIT: NOTICE-hyparquet-writer.txt).

export type ThriftValue = boolean | number | bigint | string | Uint8Array | ThriftValue[] | ThriftStruct;
export type ThriftStruct = { [id: number]: ThriftValue | undefined };

const STOP = 0;
const TRUE = 1;
const FALSE = 2;
const I32 = 5;
const I64 = 6;
const DOUBLE = 7;
const BINARY = 8;
const LIST = 9;
const STRUCT = 12;

/** Appends a struct (a page header, a file's metadata). */
export function writeStruct(out: Bytes, struct: ThriftStruct): void {
  let last = 0;
  // Integer keys enumerate in ascending order: the field ids, as the protocol wants them.
  for (const [key, value] of Object.entries(struct)) {
    if (value === undefined) continue;
    const id = Number(key);
    const type = typeOf(value);
    const delta = id - last;
    if (delta > 15) {
      out.appendUint8(type);
      out.appendZigZag(id);
    } else {
      out.appendUint8((delta << 4) | type);
    }
    writeValue(out, type, value);
    last = id;
  }
  out.appendUint8(STOP);
}

function writeValue(out: Bytes, type: number, value: ThriftValue): void {
  switch (type) {
    case TRUE:
    case FALSE:
      return; // a field's boolean is its type
    case I32:
    case I64:
      return out.appendZigZag(value as number | bigint);
    case DOUBLE:
      return out.appendFloat64(value as number);
    case BINARY: {
      const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : (value as Uint8Array);
      out.appendVarInt(bytes.length);
      return out.appendBytes(bytes);
    }
    case LIST:
      return writeList(out, value as ThriftValue[]);
    default:
      return writeStruct(out, value as ThriftStruct);
  }
}

/** A list: its size and element type (0 for an empty list), then its elements (booleans as one byte each). */
function writeList(out: Bytes, list: ThriftValue[]): void {
  const type = elementType(list);
  if (list.length > 14) {
    out.appendUint8((15 << 4) | type);
    out.appendVarInt(list.length);
  } else {
    out.appendUint8((list.length << 4) | type);
  }
  for (const value of list) {
    if (type === FALSE) out.appendUint8(value ? 1 : 0);
    else writeValue(out, type, value);
  }
}

/** One type for every element: booleans as FALSE, integers among doubles as doubles. */
function elementType(list: ThriftValue[]): number {
  let type = 0;
  for (const value of list) {
    let t = typeOf(value);
    if (t === TRUE) t = FALSE;
    if (!type) type = t;
    if (type === DOUBLE && t === I32) t = DOUBLE;
    if (type === I32 && t === DOUBLE) type = DOUBLE;
    if (t !== type) throw new Error(`a Thrift list of mixed types: ${String(value)}`);
  }
  return type;
}

function typeOf(value: ThriftValue): number {
  if (value === true) return TRUE;
  if (value === false) return FALSE;
  if (typeof value === 'number') return Number.isInteger(value) ? I32 : DOUBLE;
  if (typeof value === 'bigint') return I64;
  if (typeof value === 'string' || value instanceof Uint8Array) return BINARY;
  if (Array.isArray(value)) return LIST;
  return STRUCT;
}
