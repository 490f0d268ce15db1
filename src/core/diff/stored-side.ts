import { afterLast, type KeyStats } from '../records/keyed.js';
import { sameBytes } from '../bytes.js';
import { LineSplitter } from './byte-lines.js';
import { ByteKeyReader, keyText } from './byte-key.js';

// One stored snapshot's lines read as bytes in key order, a chunk at a time, for the merge of
// two stored snapshots (stored-diff.ts): what keyedInOrder makes of lineBatches' lines (a line
// without the key left out, repeats of a key dropped, a line out of order an error), with no
// string or object made for a line. Decoding every line and keying it as text made two of
// `sgq diff USER`'s three seconds a million records (a third of them collecting the garbage).

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
  // The kept lines of the chunk read last: each line's bytes and its key's (the key's most
  // often inside the line; in a buffer of its own when the scan could not take it in place).
  private lineBufs: Buffer[] = [];
  private starts = new Int32Array(FIRST);
  private ends = new Int32Array(FIRST);
  private keyBufs: Buffer[] = [];
  private keyStarts = new Int32Array(FIRST);
  private keyEnds = new Int32Array(FIRST);
  private asciis = new Uint8Array(FIRST);
  private n = 0;
  /** The current line: its place among the chunk's kept lines. */
  private i = 0;
  private hasLast = false;
  private lastBuf: Buffer = Buffer.alloc(0);
  private lastStart = 0;
  private lastEnd = 0;
  private lastAscii = false;
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
    if (this.i + 1 >= this.n) return false;
    this.i++;
    return true;
  }

  /** Reads chunks until one holds a line to keep; false at the end. */
  async next(): Promise<boolean> {
    while (!this.ended) {
      this.signal?.throwIfAborted();
      this.n = 0;
      this.i = 0;
      const step = await this.chunks.next();
      if (step.done) {
        this.ended = true;
        this.lines.end();
      } else this.lines.push(step.value);
      if (this.n > 0) return true;
    }
    return false;
  }

  /** The order of this side's current key against the other's: below 0 when it comes first. */
  compareKey(other: StoredSide): number {
    const [i, j] = [this.i, other.i];
    return compareKeys(this.keyBufs[i]!, this.keyStarts[i]!, this.keyEnds[i]!, this.asciis[i] === 1, other.keyBufs[j]!, other.keyStarts[j]!, other.keyEnds[j]!, other.asciis[j] === 1);
  }

  /** Whether the two current lines are the same bytes. */
  sameLine(other: StoredSide): boolean {
    const [i, j] = [this.i, other.i];
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

  /** A line of the chunk: kept with its key when it has one that comes after the last kept. */
  private add(buf: Buffer, start: number, end: number): void {
    const key = this.keys;
    const { stats } = this.source;
    if (!key.read(buf, start, end)) {
      stats.missingKey++;
      return;
    }
    if (this.hasLast) {
      const order = compareKeys(key.buf, key.start, key.end, key.ascii, this.lastBuf, this.lastStart, this.lastEnd, this.lastAscii);
      if (order === 0) {
        stats.duplicates++;
        return;
      }
      // A key before the last: afterLast says so, as keyedInOrder does.
      if (order < 0) afterLast(keyText(key.buf, key.start, key.end), keyText(this.lastBuf, this.lastStart, this.lastEnd), stats, this.source.where);
    }
    [this.hasLast, this.lastBuf, this.lastStart, this.lastEnd, this.lastAscii] = [true, key.buf, key.start, key.end, key.ascii];
    const n = this.n++;
    if (n === this.starts.length) this.grow();
    this.lineBufs[n] = buf;
    this.starts[n] = start;
    this.ends[n] = end;
    this.keyBufs[n] = key.buf;
    this.keyStarts[n] = key.start;
    this.keyEnds[n] = key.end;
    this.asciis[n] = key.ascii ? 1 : 0;
  }

  private grow(): void {
    const size = this.starts.length * 2;
    const grown = <T extends Int32Array | Uint8Array>(from: T, to: T): T => (to.set(from), to);
    this.starts = grown(this.starts, new Int32Array(size));
    this.ends = grown(this.ends, new Int32Array(size));
    this.keyStarts = grown(this.keyStarts, new Int32Array(size));
    this.keyEnds = grown(this.keyEnds, new Int32Array(size));
    this.asciis = grown(this.asciis, new Uint8Array(size));
  }
}

/**
 * Two keys' order as their texts' (UTF-16 units): keys of ASCII bytes compared byte by byte
 * (the same order), any other decoded first (UTF-8's order is the code points', which differs
 * from UTF-16's past U+FFFF).
 */
export function compareKeys(ab: Buffer, as: number, ae: number, aAscii: boolean, bb: Buffer, bs: number, be: number, bAscii: boolean): number {
  if (aAscii && bAscii) {
    const n = Math.min(ae - as, be - bs);
    for (let k = 0; k < n; k++) {
      const d = ab[as + k]! - bb[bs + k]!;
      if (d !== 0) return d;
    }
    return ae - as - (be - bs);
  }
  const a = keyText(ab, as, ae);
  const b = keyText(bb, bs, be);
  return a < b ? -1 : a > b ? 1 : 0;
}
