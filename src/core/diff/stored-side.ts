import { afterLast, type KeyStats } from '../records/keyed.js';
import { LineTooLong } from '../records/lines.js';
import { NotARecord } from '../records/record-key.js';
import { sameBytes } from '../bytes.js';
import { LineSplitter } from './byte-lines.js';
import { ByteKeyReader, keyText } from './byte-key.js';

// One stored snapshot's lines read as bytes in key order, a chunk at a time, for the merge of
// two stored snapshots (stored-diff.ts): what keyedInOrder makes of lineBatches' lines (a line
// without the key left out, repeats of a key dropped, a line out of order an error), with no
// string or object made for a line. Decoded and keyed as text (a string a line, a string a key,
// an object a line), two snapshots of 5,000,000 records took 4.9 s to diff, the garbage
// collector a third of its CPU; as bytes, 3.2 s.

/** Lines of a chunk held at first (a 128 KiB gunzip piece holds about 1,300 of the service's). */
const FIRST = 2048;

/** The side's bytes, the field it is in order of, what keying it leaves out, and its name for an error. */
export interface StoredSource {
  bytes: AsyncIterable<Buffer>;
  field: string;
  stats: KeyStats;
  where: string;
}

export class StoredSide {
  // The kept lines of the chunk read last, at places 1 to n: each line's bytes and its key's
  // (the key's most often inside the line; in a buffer of its own when the scan could not take
  // it in place), with the key's first twelve bytes as two numbers (`heads`, `tails`: see
  // `digits`) when it is ASCII. Place 0 holds the key kept last before the chunk, which the
  // chunk's first key must come after.
  private lineBufs: Buffer[] = [];
  private starts = new Int32Array(FIRST);
  private ends = new Int32Array(FIRST);
  private keyBufs: Buffer[] = [];
  private keyStarts = new Int32Array(FIRST);
  private keyEnds = new Int32Array(FIRST);
  private asciis = new Uint8Array(FIRST);
  private heads = new Float64Array(FIRST);
  private tails = new Float64Array(FIRST);
  private n = 0;
  /** The current line's place. */
  private i = 1;
  private ended = false;
  private readonly chunks: AsyncIterator<Buffer>;
  private readonly keys: ByteKeyReader;
  private readonly lines = new LineSplitter((buf, start, end) => this.add(buf, start, end), false);

  constructor(
    private readonly source: StoredSource,
    /** Checked before each chunk is read: a stop ends a long merge within a chunk. */
    private readonly signal?: AbortSignal,
  ) {
    this.chunks = source.bytes[Symbol.asyncIterator]();
    this.keys = new ByteKeyReader(source.field);
  }

  /** Moves to the next line of the chunk; false when it is used up (then call `next`). */
  advance(): boolean {
    if (this.i >= this.n) return false;
    this.i++;
    return true;
  }

  /** Reads chunks until one holds a line to keep; false at the end. */
  async next(): Promise<boolean> {
    while (!this.ended) {
      this.signal?.throwIfAborted();
      if (this.n > 0) this.copy(this.n, 0);
      this.n = 0;
      this.i = 1;
      const step = await this.chunks.next();
      if (step.done) this.ended = true;
      this.split(step.done ? undefined : step.value);
      if (this.n > 0) return true;
    }
    return false;
  }

  /** The order of this side's current key against the other's: below 0 when it comes first. */
  compareKey(other: StoredSide): number {
    return this.compareAt(this.i, other, other.i);
  }

  /** Whether the two current lines are the same bytes. */
  sameLine(other: StoredSide): boolean {
    const i = this.i;
    const j = other.i;
    const length = this.ends[i]! - this.starts[i]!;
    return length === other.ends[j]! - other.starts[j]! && sameBytes(this.lineBufs[i]!, this.starts[i]!, other.lineBufs[j]!, other.starts[j]!, length);
  }

  /** The current line as text. */
  text(): string {
    return this.lineBufs[this.i]!.toString('utf8', this.starts[this.i], this.ends[this.i]);
  }

  async close(): Promise<void> {
    await this.chunks.return?.();
  }

  /** Splits a chunk into lines (the rest, at the end); a line that cannot be read is named with its snapshot. */
  private split(chunk: Buffer | undefined): void {
    try {
      if (chunk) this.lines.push(chunk);
      else this.lines.end();
    } catch (error) {
      if (error instanceof LineTooLong || error instanceof NotARecord) error.message = `${this.source.where}: ${error.message}`;
      throw error;
    }
  }

  /** A line of the chunk: kept with its key when it has one that comes after the last kept. */
  private add(buf: Buffer, start: number, end: number): void {
    const key = this.keys;
    const { stats } = this.source;
    if (!key.read(buf, start, end)) {
      stats.missingKey++;
      return;
    }
    const n = this.n + 1;
    if (n === this.starts.length) this.grow();
    this.keyBufs[n] = key.buf;
    this.keyStarts[n] = key.start;
    this.keyEnds[n] = key.end;
    this.asciis[n] = key.ascii ? 1 : 0;
    if (key.ascii) {
      this.heads[n] = digits(key.buf, key.start, key.end);
      this.tails[n] = digits(key.buf, key.start + DIGITS, key.end);
    }
    const order = n > 1 || this.hasLast() ? this.compareAt(n, this, n - 1) : 1;
    if (order === 0) {
      stats.duplicates++;
      return;
    }
    // A key before the last: afterLast says so, as keyedInOrder does.
    if (order < 0) afterLast(this.keyTextAt(n), this.keyTextAt(n - 1), stats, this.source.where);
    this.lineBufs[n] = buf;
    this.starts[n] = start;
    this.ends[n] = end;
    this.n = n;
  }

  /** Whether place 0 holds a key: one was kept before this chunk. */
  private hasLast(): boolean {
    return this.keyBufs[0] !== undefined;
  }

  /**
   * The order of the key at place i against the other side's at place j, as their texts' (UTF-16
   * units): ASCII keys by their heads, then their bytes past them (the same order); any other
   * decoded first (UTF-8's order is the code points', which differs from UTF-16's past U+FFFF).
   */
  private compareAt(i: number, other: StoredSide, j: number): number {
    if (this.asciis[i]! & other.asciis[j]!) {
      const head = this.heads[i]! - other.heads[j]!;
      if (head !== 0) return head;
      const tail = this.tails[i]! - other.tails[j]!;
      if (tail !== 0) return tail;
      return compareBytes(this.keyBufs[i]!, this.keyStarts[i]! + 2 * DIGITS, this.keyEnds[i]!, other.keyBufs[j]!, other.keyStarts[j]! + 2 * DIGITS, other.keyEnds[j]!);
    }
    const a = this.keyTextAt(i);
    const b = other.keyTextAt(j);
    return a < b ? -1 : a > b ? 1 : 0;
  }

  private keyTextAt(i: number): string {
    return keyText(this.keyBufs[i]!, this.keyStarts[i]!, this.keyEnds[i]!);
  }

  /** Place `from`'s key at place `to`. */
  private copy(from: number, to: number): void {
    this.keyBufs[to] = this.keyBufs[from]!;
    this.keyStarts[to] = this.keyStarts[from]!;
    this.keyEnds[to] = this.keyEnds[from]!;
    this.asciis[to] = this.asciis[from]!;
    this.heads[to] = this.heads[from]!;
    this.tails[to] = this.tails[from]!;
  }

  private grow(): void {
    const size = this.starts.length * 2;
    const grown = <T extends Int32Array | Uint8Array | Float64Array>(from: T, to: T): T => (to.set(from), to);
    this.starts = grown(this.starts, new Int32Array(size));
    this.ends = grown(this.ends, new Int32Array(size));
    this.keyStarts = grown(this.keyStarts, new Int32Array(size));
    this.keyEnds = grown(this.keyEnds, new Int32Array(size));
    this.asciis = grown(this.asciis, new Uint8Array(size));
    this.heads = grown(this.heads, new Float64Array(size));
    this.tails = grown(this.tails, new Float64Array(size));
  }
}

/** Bytes of a key a number holds: 257^6 is below 2^53, so the number is exact. */
const DIGITS = 6;

/**
 * Up to DIGITS bytes of a key from `at`, as one number that orders as the bytes do: each byte
 * b a base-257 digit b + 1, a place past the key's end 0 (so a key sorts before any longer one
 * it begins).
 */
function digits(buf: Buffer, at: number, end: number): number {
  let value = 0;
  for (let p = at; p < at + DIGITS; p++) value = value * 257 + (p < end ? buf[p]! + 1 : 0);
  return value;
}

/** Bytes' order, then their lengths' (a prefix first); none past either end compares equal. */
function compareBytes(a: Buffer, as: number, ae: number, b: Buffer, bs: number, be: number): number {
  const n = Math.min(ae - as, be - bs);
  for (let k = 0; k < n; k++) {
    const d = a[as + k]! - b[bs + k]!;
    if (d !== 0) return d;
  }
  return Math.max(ae - as, 0) - Math.max(be - bs, 0);
}
