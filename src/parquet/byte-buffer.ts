// A growing byte buffer outside the JS heap: a column's values while its row group is built,
// and the bytes of a file (pages, footer) until they are handed to the writer's sink.

export class Bytes {
  bytes: Buffer;
  view: DataView;
  /** Where the next byte goes; the buffer's bytes before it are what was written. */
  pos = 0;
  /** Bytes written before the last take(): a file's offsets count them. */
  private taken = 0;

  constructor(size = 1 << 12) {
    this.bytes = Buffer.allocUnsafe(Math.ceil(size));
    this.view = new DataView(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength);
  }

  /** Bytes written since the buffer was made, those taken included. */
  get offset(): number {
    return this.taken + this.pos;
  }

  ensure(more: number): void {
    if (this.pos + more <= this.bytes.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.pos + more));
    this.bytes.copy(bigger, 0, 0, this.pos);
    this.bytes = bigger;
    this.view = new DataView(bigger.buffer, bigger.byteOffset, bigger.byteLength);
  }

  get filled(): Uint8Array {
    return this.bytes.subarray(0, this.pos);
  }

  /** A copy of what was written since the last take (the sink may keep it), and room for more. */
  take(): Uint8Array {
    const copy = new Uint8Array(this.filled);
    this.taken += this.pos;
    this.pos = 0;
    return copy;
  }

  appendUint8(value: number): void {
    this.ensure(1);
    this.bytes[this.pos++] = value;
  }

  appendUint32(value: number): void {
    this.ensure(4);
    this.view.setUint32(this.pos, value, true);
    this.pos += 4;
  }

  appendFloat64(value: number): void {
    this.ensure(8);
    this.view.setFloat64(this.pos, value, true);
    this.pos += 8;
  }

  appendBytes(bytes: Uint8Array): void {
    this.ensure(bytes.length);
    this.bytes.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  /** The last `width` bytes written, `times` more times (a value repeated down a column). */
  repeatLast(width: number, times: number): void {
    this.ensure(width * times);
    const from = this.pos - width;
    // Doubling what is there: a few copies, not one per value.
    for (let have = 1; have <= times; ) {
      const copies = Math.min(have, times + 1 - have);
      this.bytes.copyWithin(from + have * width, from, from + copies * width);
      have += copies;
    }
    this.pos = from + (times + 1) * width;
  }

  /** An unsigned LEB128 varint of at most 32 bits. */
  appendVarInt(value: number): void {
    while ((value & ~0x7f) !== 0) {
      this.appendUint8((value & 0x7f) | 0x80);
      value >>>= 7;
    }
    this.appendUint8(value);
  }

  /** A zigzag varint: Thrift's i32 (a number) and i64 (a bigint). */
  appendZigZag(value: number | bigint): void {
    if (typeof value === 'number') return this.appendVarInt((value << 1) ^ (value >> 31));
    let n = (value << 1n) ^ (value >> 63n);
    while ((n & ~0x7fn) !== 0n) {
      this.appendUint8(Number((n & 0x7fn) | 0x80n));
      n >>= 7n;
    }
    this.appendUint8(Number(n));
  }

  /** A string as PLAIN BYTE_ARRAY: its UTF-8 length (4 bytes, little-endian), then its UTF-8. */
  string(text: string): void {
    this.ensure(4 + text.length * 3); // a UTF-16 unit is at most 3 bytes of UTF-8
    const length = this.bytes.write(text, this.pos + 4, 'utf8');
    this.bytes.writeUInt32LE(length, this.pos);
    this.pos += 4 + length;
  }
}
