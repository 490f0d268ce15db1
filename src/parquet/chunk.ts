import type { ColumnChunk as ChunkMeta, ParquetType } from 'hyparquet';
import { Bytes } from './byte-buffer.js';
import { writePageHeader, type PageHeader } from './footer.js';
import { writeRleBitPackedHybrid } from './rle.js';

// One column of one row group as a Parquet column chunk: an optional dictionary page and one
// data page (v2: definition levels as they are, values PLAIN or dictionary indices, GZIP).
// GZIP rather than Snappy: Node's zlib is native, so a short run pays no JIT warm-up for it; at
// level 1 it took 18 ms where JS Snappy took 73-116 ms over 200,000 names, and wrote a third
// less. DuckDB, Spark, BigQuery and Arrow all read it.

export type ColumnType = 'BOOLEAN' | 'INT64' | 'DOUBLE' | 'DECIMAL' | 'TIMESTAMP' | 'DATE' | 'STRING';

/** The Parquet type each column type is stored as. */
const PHYSICAL: Record<ColumnType, ParquetType> = {
  BOOLEAN: 'BOOLEAN',
  INT64: 'INT64',
  DOUBLE: 'DOUBLE',
  DECIMAL: 'FIXED_LEN_BYTE_ARRAY',
  TIMESTAMP: 'INT64',
  DATE: 'INT32',
  STRING: 'BYTE_ARRAY',
};

/** The bytes of one value of a fixed-width type. */
const WIDTH: Partial<Record<ColumnType, number>> = { INT64: 8, TIMESTAMP: 8, DECIMAL: 16, DATE: 4 };

/**
 * A column is compressed while that shrinks its values to 90% or less (timestamps and ids to
 * the microsecond barely shrink); a column left uncompressed is tried again every 16th row group.
 */
const WORTH_COMPRESSING = 0.9;
const COMPRESSION_RETRY = 16;

/** How many strings a dictionary is judged on first, and the share of them that may differ. */
const SAMPLE = 1000;
const SAMPLE_DISTINCT = 0.8;

/**
 * One column's chunk of the row group being built. Each value is encoded as it arrives, into
 * bytes outside the JS heap, so a row group holds no record and no object per value (a string
 * column also keeps its distinct values while a dictionary may still pay).
 */
export class ColumnChunk {
  private flags: Uint8Array;
  private rows = 0;
  private present = 0;
  private readonly values = new Bytes();
  private min: number | bigint | undefined;
  private max: number | bigint | undefined;
  private dictionary?: Map<string, number>;
  /** The dictionary's values, by index. */
  private keys: string[] = [];
  private indices?: Uint32Array;
  /** Whether compressing this column is worth it (judged again every COMPRESSION_RETRY row groups). */
  private compress = true;
  private groups = 0;

  constructor(
    readonly name: string,
    readonly type: ColumnType,
    capacity: number,
  ) {
    this.flags = new Uint8Array(capacity);
    this.reset();
  }

  get size(): number {
    return this.rows;
  }

  /** The next row's value as the column stores it (INT64, and TIMESTAMP in microseconds, a safe integer or a bigint; DECIMAL unscaled, a bigint; DATE in days), or null. */
  add(value: unknown): void {
    if (this.rows === this.flags.length) this.flags = grown(this.flags);
    if (value === null) {
      this.flags[this.rows++] = 0;
      return;
    }
    this.flags[this.rows++] = 1;
    this.present++;
    switch (this.type) {
      case 'BOOLEAN':
        return this.boolean(value as boolean);
      case 'INT64':
      case 'TIMESTAMP':
        this.values.ensure(8);
        writeInt64(this.values.view, this.values.pos, value as number | bigint);
        return this.fixed(value as number | bigint, 8);
      case 'DECIMAL':
        this.values.ensure(16);
        writeDecimal(this.values.view, this.values.pos, value as bigint);
        return this.fixed(value as bigint, 16);
      case 'DATE':
        this.values.ensure(4);
        this.values.view.setInt32(this.values.pos, value as number, true);
        return this.fixed(value as number, 4);
      case 'DOUBLE':
        return this.double(value as number);
      case 'STRING':
        return this.string(value as string);
    }
  }

  /**
   * One value, as add() takes it, for the next `n` rows: the bytes the same as n add()s, with
   * no per-row conversion or dictionary lookup (a dataset's query_user and fetched_at, the same
   * for every record of a page).
   */
  addMany(value: unknown, n: number): void {
    if (n <= 0) return;
    const width = WIDTH[this.type];
    const repeats = value === null || width !== undefined || (this.type === 'STRING' && this.dictionary !== undefined);
    if (!repeats) {
      for (let i = 0; i < n; i++) this.add(value);
      return;
    }
    this.add(value);
    if (this.type === 'STRING' && value !== null && this.dictionary === undefined) {
      // That value gave the dictionary up: the others PLAIN, as add() writes them.
      for (let i = 1; i < n; i++) this.add(value);
      return;
    }
    const more = n - 1;
    while (this.rows + more > this.flags.length) this.flags = grown(this.flags);
    this.flags.fill(value === null ? 0 : 1, this.rows, this.rows + more);
    this.rows += more;
    if (value === null) return;
    const before = this.present;
    this.present += more;
    if (width !== undefined) return this.values.repeatLast(width, more);
    while (this.present > this.indices!.length) this.indices = grown(this.indices!);
    this.indices!.fill(this.indices![before - 1]!, before, this.present);
    // add()'s check at the SAMPLE-th value, which this fill may have passed (the keys are the same as they were there).
    if (before < SAMPLE && this.present >= SAMPLE && this.keys.length > SAMPLE * SAMPLE_DISTINCT) this.toPlain();
  }

  /** Writes the chunk to `out`, returns its metadata for the footer, and starts the next row group's. */
  write(out: Bytes) {
    const start = out.offset;
    const codec: 'GZIP' | 'UNCOMPRESSED' = this.compress || ++this.groups % COMPRESSION_RETRY === 0 ? 'GZIP' : 'UNCOMPRESSED';
    let uncompressed = 0;
    let dictionaryOffset: bigint | undefined;
    const dictionary = this.dictionaryPays() ? this.dictionaryPages() : this.constant() ? this.constantPages() : undefined;
    if (dictionary) {
      dictionaryOffset = BigInt(out.offset);
      uncompressed += writePage(out, codec, dictionary.plain, undefined, (size) => ({
        type: 'DICTIONARY_PAGE', ...size, dictionary_page_header: { num_values: dictionary.count, encoding: 'PLAIN' },
      })).size;
    }
    const levels = new Bytes(this.rows / 8 + 16);
    writeRleBitPackedHybrid(levels, this.flags.subarray(0, this.rows), 1);
    const encoding = dictionary ? 'RLE_DICTIONARY' : 'PLAIN';
    const dataOffset = BigInt(out.offset);
    const data = writePage(out, codec, dictionary?.indices ?? this.values.filled, levels, (size) => ({
      type: 'DATA_PAGE_V2', ...size,
      data_page_header_v2: { num_values: this.rows, num_nulls: this.rows - this.present, num_rows: this.rows, encoding, definition_levels_byte_length: levels.pos, repetition_levels_byte_length: 0, is_compressed: codec === 'GZIP' },
    }));
    uncompressed += data.size;
    if (codec === 'GZIP') this.compress = data.ratio <= WORTH_COMPRESSING;
    const meta: ChunkMeta & { meta_data: NonNullable<ChunkMeta['meta_data']> } = {
      meta_data: {
        type: PHYSICAL[this.type],
        encodings: dictionary ? ['PLAIN', 'RLE_DICTIONARY'] : ['PLAIN'],
        path_in_schema: [this.name],
        codec,
        num_values: BigInt(this.rows),
        total_compressed_size: BigInt(out.offset - start),
        total_uncompressed_size: BigInt(uncompressed),
        data_page_offset: dataOffset,
        dictionary_page_offset: dictionaryOffset,
        statistics: this.statistics(dictionary?.bounds),
      },
      file_offset: BigInt(start),
    };
    this.reset();
    return meta;
  }

  private statistics(bounds: [string | undefined, string | undefined] | undefined) {
    const [min, max] = bounds ?? (this.type === 'DOUBLE' ? doubleBounds(this.min as number, this.max as number) : [this.min, this.max]);
    return { null_count: BigInt(this.rows - this.present), min_value: min, max_value: max };
  }

  private reset(): void {
    this.rows = 0;
    this.present = 0;
    this.values.pos = 0;
    this.min = this.max = undefined;
    if (this.type === 'DOUBLE') [this.min, this.max] = [Infinity, -Infinity];
    if (this.type === 'STRING') {
      this.dictionary = new Map();
      this.keys = [];
      this.indices ??= new Uint32Array(this.flags.length);
    }
  }

  /** BOOLEAN, PLAIN: bit-packed, the first value in the lowest bit. */
  private boolean(value: boolean): void {
    const bit = this.present - 1;
    if ((bit & 7) === 0) {
      this.values.ensure(1);
      this.values.bytes[this.values.pos++] = 0;
    }
    if (value) this.values.bytes[bit >> 3]! |= 1 << (bit & 7);
  }

  /** Counts a fixed-width value just written; numbers and bigints compare with each other as they are. */
  private fixed(value: number | bigint, width: number): void {
    this.values.pos += width;
    if (this.min === undefined || value < (this.min as number | bigint)) this.min = value;
    if (this.max === undefined || value > (this.max as number | bigint)) this.max = value;
  }

  private double(value: number): void {
    this.values.ensure(8);
    this.values.view.setFloat64(this.values.pos, value, true);
    this.values.pos += 8;
    if (value < (this.min as number)) this.min = value;
    if (value > (this.max as number)) this.max = value;
  }

  /** Dictionary indices while a dictionary may pay; PLAIN once it cannot (the values so far rewritten from it). */
  private string(value: string): void {
    const dictionary = this.dictionary;
    if (!dictionary) return this.values.string(value);
    let at = dictionary.get(value);
    if (at === undefined) {
      at = this.keys.length;
      dictionary.set(value, at);
      this.keys.push(value);
    }
    if (this.present > this.indices!.length) this.indices = grown(this.indices!);
    this.indices![this.present - 1] = at;
    // A sample of mostly different values, or more distinct values than half a row group: no dictionary.
    if ((this.present === SAMPLE && this.keys.length > SAMPLE * SAMPLE_DISTINCT) || this.keys.length > this.flags.length / 2) this.toPlain();
  }

  /** Gives the dictionary up: the values so far, PLAIN, from their indices. */
  private toPlain(): void {
    for (let i = 0; i < this.present; i++) this.values.string(this.keys[this.indices![i]!]!);
    this.dictionary = undefined;
    this.keys = [];
  }

  /** A dictionary pays when it holds at most half as many values as the chunk; when it does not, the chunk goes PLAIN. */
  private dictionaryPays(): boolean {
    if (!this.dictionary) return false;
    if (this.present > 0 && this.keys.length <= this.present / 2) return true;
    this.toPlain();
    return false;
  }

  /** Whether every value of a chunk of integers (a run's fetched_at, say) is one and the same. */
  private constant(): boolean {
    return this.present > 1 && (this.type === 'INT64' || this.type === 'TIMESTAMP' || this.type === 'DECIMAL' || this.type === 'DATE') && this.min === this.max;
  }

  /** A one-value dictionary (the first value, PLAIN) and its index 0 for every row: one RLE run. */
  private constantPages() {
    const rle = new Bytes(16);
    rle.appendUint8(1);
    rle.appendVarInt(this.present << 1);
    rle.appendUint8(0);
    return { count: 1, plain: this.values.filled.subarray(0, WIDTH[this.type]), indices: rle.filled, bounds: undefined };
  }

  /** The dictionary's values (PLAIN), the data page's indices (bit width, then the hybrid), and the bounds of the values. */
  private dictionaryPages() {
    const keys = this.keys;
    const plain = new Bytes();
    for (const key of keys) plain.string(key);
    const width = Math.max(1, 32 - Math.clz32(keys.length - 1));
    const rle = new Bytes(this.present + 16);
    rle.appendUint8(width);
    writeRleBitPackedHybrid(rle, this.indices!.subarray(0, this.present), width);
    return { count: keys.length, plain: plain.filled, indices: rle.filled, bounds: stringBounds(keys) };
  }
}

/** The same values in an array twice as long (1024 to begin with). */
function grown<T extends Uint8Array | Uint32Array>(array: T): T {
  const bigger = new (array.constructor as new (length: number) => T)(array.length * 2 || 1024);
  bigger.set(array);
  return bigger;
}

type PageSize = Pick<PageHeader, 'uncompressed_page_size' | 'compressed_page_size'>;

/**
 * A page: header, the levels as they are (data pages), the values (compressed unless the
 * chunk's codec is UNCOMPRESSED). Returns its uncompressed size, header included, and how far
 * compression shrank the values.
 */
function writePage(out: Bytes, codec: 'GZIP' | 'UNCOMPRESSED', values: Uint8Array, levels: Bytes | undefined, header: (size: PageSize) => PageHeader) {
  // node:zlib on first use: every command reaches this file through formats.ts, and loading it
  // cost each one-page command about 0.45 ms.
  const stored = codec === 'GZIP' ? process.getBuiltinModule('node:zlib').gzipSync(values, { level: 1 }) : values;
  const levelBytes = levels?.pos ?? 0;
  const before = out.offset;
  writePageHeader(out, header({ uncompressed_page_size: levelBytes + values.length, compressed_page_size: levelBytes + stored.length }));
  const headerSize = out.offset - before;
  if (levels) out.appendBytes(levels.filled);
  out.appendBytes(stored);
  return { size: headerSize + levelBytes + values.length, ratio: stored.length / Math.max(1, values.length) };
}

/** Parquet's rule for the statistics of signed zeros: the least is -0, the greatest +0 (none when no value was present). */
function doubleBounds(min: number, max: number): [number | undefined, number | undefined] {
  if (min > max) return [undefined, undefined];
  return [min === 0 ? -0 : min, max === 0 ? 0 : max];
}

const TWO_32 = 2 ** 32;

/** An INT64, little-endian: a safe integer in two 32-bit halves (no BigInt made), a bigint as it is. */
function writeInt64(view: DataView, at: number, value: number | bigint): void {
  if (typeof value === 'bigint') return view.setBigInt64(at, value, true);
  const high = Math.floor(value / TWO_32);
  view.setUint32(at, value - high * TWO_32, true);
  view.setInt32(at + 4, high, true);
}

const TWO_128 = 1n << 128n;
const LOW_64 = (1n << 64n) - 1n;

/** A DECIMAL's unscaled value in 16 bytes, big-endian two's complement. */
function writeDecimal(view: DataView, at: number, unscaled: bigint): void {
  const bits = unscaled < 0n ? unscaled + TWO_128 : unscaled;
  view.setBigUint64(at, bits >> 64n);
  view.setBigUint64(at + 8, bits & LOW_64);
}

/** The least and greatest of distinct strings in UTF-8 byte order (code point order), as Parquet's statistics compare them. */
function stringBounds(keys: readonly string[]): [string | undefined, string | undefined] {
  let min: string | undefined;
  let max: string | undefined;
  for (const key of keys) {
    if (min === undefined || compareCodePoints(key, min) < 0) min = key;
    if (max === undefined || compareCodePoints(key, max) > 0) max = key;
  }
  return [min, max];
}

/** Code point order; a lone surrogate counts as U+FFFD, the character UTF-8 writes for it. */
export function compareCodePoints(a: string, b: string): number {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = codePoint(a, i);
    const y = codePoint(b, j);
    if (x !== y) return x - y;
    i += x > 0xffff ? 2 : 1;
    j += y > 0xffff ? 2 : 1;
  }
  return (a.length - i) - (b.length - j);
}

function codePoint(text: string, at: number): number {
  const code = text.codePointAt(at)!;
  return code >= 0xd800 && code <= 0xdfff ? 0xfffd : code;
}
