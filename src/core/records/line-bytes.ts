import { keyOrder } from './key-order.js';
import type { Keyed, KeyStats } from './keyed.js';

// Record lines as UTF-8, each ended by LF, in pieces of about 128 KiB, with each line's key
// and place: what a snapshot's data file holds before gzip (store.ts). A --snapshot run holds
// each user's export this way from the page it came in until its diff is done (capture.ts):
// held as strings, a user's lines outlived V8's young collections while the user was in
// flight and died in old space (GC was the nightly job's largest single cost on the main
// thread). Bytes live outside V8's heap; a line is decoded to text only when a diff reports
// it, and its diff compares the stored snapshot's bytes with these (held-diff.ts).

/** A piece's size: each is one write to the store's gzip, a round trip through libuv's threads. */
const PIECE = 128 * 1024;
const BATCH = 1000;
const LF = 0x0a;

/**
 * Pieces given back once nothing reads them (`recycle`: an export's arrival order once sorted,
 * a held export once diffed), reused by the next builder. A fresh 128 KiB buffer for every
 * piece (eight a user) made V8 run a fifth more mark-compacts over 400 users: each is memory
 * outside its heap that V8 counts. At most 16 kept (2 MiB).
 */
const spare: Buffer[] = [];
const SPARE = 16;

/** Lines appended one at a time (encoded, or copied as bytes), then `done`: a LineBytes. */
export class LineBytesBuilder {
  private readonly parts: Buffer[] = [];
  private buffer: Buffer = Buffer.allocUnsafe(0);
  private at = 0;
  private readonly keys: string[] = [];
  private piece: Int32Array = new Int32Array(BATCH);
  private starts: Int32Array = new Int32Array(BATCH);
  private ends: Int32Array = new Int32Array(BATCH);
  /** The lines' bytes so far, LFs included (the room left in the piece being filled is at most one piece more). */
  bytes = 0;

  get count(): number {
    return this.keys.length;
  }

  /** A line as text, encoded. */
  add(key: string, line: string): void {
    // A UTF-16 unit takes at most 3 bytes: a line that may not fit starts a new piece.
    this.room(line.length * 3 + 1);
    const start = this.at;
    this.at += this.buffer.write(line, start);
    this.placed(key, start);
  }

  /** A line as bytes, `from[start, end)`, copied. */
  addBytes(key: string, from: Buffer, start: number, end: number): void {
    this.room(end - start + 1);
    const at = this.at;
    this.at += from.copy(this.buffer, at, start, end);
    this.placed(key, at);
  }

  private room(most: number): void {
    if (this.at + most <= this.buffer.length) return;
    this.cut();
    this.buffer = most <= PIECE && spare.length ? spare.pop()! : Buffer.allocUnsafe(Math.max(PIECE, most));
  }

  private placed(key: string, start: number): void {
    const i = this.keys.length;
    if (i === this.piece.length) [this.piece, this.starts, this.ends] = [grown(this.piece), grown(this.starts), grown(this.ends)];
    this.keys.push(key);
    this.piece[i] = this.parts.length;
    this.starts[i] = start;
    this.ends[i] = this.at;
    this.buffer[this.at++] = LF;
    this.bytes += this.at - start;
  }

  /** Ends the piece being filled (its unused room let go of when it is mostly empty). */
  private cut(): void {
    if (this.at === 0) return;
    const last = this.buffer.subarray(0, this.at);
    this.parts.push(this.at * 2 < this.buffer.length ? Buffer.from(last) : last);
    this.buffer = Buffer.allocUnsafe(0);
    this.at = 0;
  }

  done(): LineBytes {
    this.cut();
    const n = this.keys.length;
    return new LineBytes(this.parts, this.keys, this.piece.subarray(0, n), this.starts.subarray(0, n), this.ends.subarray(0, n));
  }
}

function grown(array: Int32Array): Int32Array {
  const bigger = new Int32Array(array.length * 2);
  bigger.set(array);
  return bigger;
}

export class LineBytes {
  constructor(
    private readonly parts: readonly Buffer[],
    private readonly keys: readonly string[],
    /** Per line: its piece, and its bytes' start and end (LF left out) in that piece. */
    private readonly piece: Int32Array,
    private readonly starts: Int32Array,
    private readonly ends: Int32Array,
  ) {}

  /** Gives its pieces to the next builders: nothing may read this one afterwards. */
  recycle(): void {
    for (const part of this.parts) {
      if (spare.length >= SPARE) return;
      if (part.buffer.byteLength === PIECE && part.byteOffset === 0) spare.push(Buffer.from(part.buffer, 0, PIECE));
    }
  }

  /** Keyed lines encoded (what the store writes of a batch that is not held as bytes already). */
  static of(items: readonly Keyed[]): LineBytes {
    const builder = new LineBytesBuilder();
    for (const item of items) builder.add(item.key, item.line);
    return builder.done();
  }

  get count(): number {
    return this.keys.length;
  }

  key(i: number): string {
    return this.keys[i]!;
  }

  /** Line `i` decoded. */
  line(i: number): string {
    return this.parts[this.piece[i]!]!.toString('utf8', this.starts[i], this.ends[i]);
  }

  /** Whether line `i` is the bytes `buf[start, end)`. */
  equals(i: number, buf: Buffer, start: number, end: number): boolean {
    const s = this.starts[i]!;
    const e = this.ends[i]!;
    return e - s === end - start && buf.compare(this.parts[this.piece[i]!]!, s, e, start, end) === 0;
  }

  /**
   * The lines in key order (equal keys in the order held), each key once: the first; the
   * others are counted in `stats.duplicates`. Copied: this one can be let go of.
   */
  sorted(stats: KeyStats): LineBytes {
    const order = keyOrder(this.keys);
    const out = new LineBytesBuilder();
    let last: string | undefined;
    for (let x = 0; x < order.length; x++) {
      const i = order[x]!;
      const key = this.keys[i]!;
      if (x > 0 && key === last) stats.duplicates++;
      else out.addBytes(key, this.parts[this.piece[i]!]!, this.starts[i]!, this.ends[i]!);
      last = key;
    }
    return out.done();
  }

  /** The lines decoded with their keys, in batches of `size` (where a diff reads keyed lines; a glance at the first few, smaller ones). */
  async *batches(size = BATCH): AsyncGenerator<Keyed[]> {
    for (let from = 0; from < this.count; from += size) {
      const batch: Keyed[] = [];
      for (let i = from; i < Math.min(from + size, this.count); i++) batch.push({ key: this.keys[i]!, line: this.line(i) });
      yield batch;
    }
  }

  /**
   * The bytes, each piece whole lines (a line longer than a piece is a piece of its own).
   * With `least`, pieces are joined until they hold that many bytes (the last may hold
   * fewer): each piece is one write to gzip, a round trip through libuv's threads whose
   * callback runs on the main thread.
   */
  *pieces(least = 0): Generator<Buffer> {
    let joined: Buffer[] = [];
    let bytes = 0;
    for (const piece of this.parts) {
      joined.push(piece);
      bytes += piece.length;
      if (bytes < least) continue;
      yield joined.length === 1 ? piece : Buffer.concat(joined, bytes);
      joined = [];
      bytes = 0;
    }
    if (bytes > 0) yield joined.length === 1 ? joined[0]! : Buffer.concat(joined, bytes);
  }
}
