import { RUN_CHARS } from './external-sort.js';
import type { Keyed } from './keyed.js';

// Record lines as UTF-8, each ended by LF, in pieces of about 128 KiB: what a snapshot's data
// file holds before gzip (store.ts), encoded once. For an export held in memory (one just
// staged) the pieces are kept with where each line is, and its diff compares the stored
// snapshot's bytes with them (held-diff.ts): a line found the same is never decoded. Decoding
// the stored side to text was a third of that diff's cost, on a night where most lines are
// as they were.

/** A piece's size: each is one write to the store's gzip, a round trip through libuv's threads. */
const PIECE = 128 * 1024;

/**
 * The most characters whose bytes are kept: a larger export's line is encoded again when it is
 * compared (no memory held for it). Kept whole, the bytes of 24 exports of 8,500 followers at
 * --concurrency 8 raised the peak RSS by 25-35 MiB.
 */
const KEPT_CHARS = RUN_CHARS / 4;

/** Where a line was encoded to compare it, when its bytes are not kept; one for every diff (used within one call). */
const SCRATCH = Buffer.allocUnsafe(PIECE);

export class LineBytes {
  /** Per line: its piece, and its bytes' start and end (LF left out) in that piece; none when not kept. */
  private readonly kept?: { pieces: Buffer[]; piece: Int32Array; starts: Int32Array; ends: Int32Array };

  constructor(
    readonly items: readonly Keyed[],
    /** Whether the bytes of that many characters may be kept (a run's shared budget, memory-budget.ts). */
    room: (chars: number) => boolean = () => true,
  ) {
    let chars = 0;
    for (const item of items) chars += item.line.length;
    if (chars > KEPT_CHARS || !room(chars)) return;
    const n = items.length;
    const kept = (this.kept = { pieces: [] as Buffer[], piece: new Int32Array(n), starts: new Int32Array(n), ends: new Int32Array(n) });
    encode(
      items,
      (piece) => kept.pieces.push(piece),
      (i, start, end) => {
        kept.piece[i] = kept.pieces.length;
        kept.starts[i] = start;
        kept.ends[i] = end;
      },
    );
  }

  get count(): number {
    return this.items.length;
  }

  /**
   * The bytes, each piece whole lines (a line longer than a piece is a piece of its own); not
   * kept, encoded a thousand lines at a time. With `least`, pieces are joined until they hold
   * that many bytes (the last may hold fewer): each piece is one write to gzip, a round trip
   * through libuv's threads whose callback runs on the main thread.
   */
  *pieces(least = 0): Generator<Buffer> {
    let joined: Buffer[] = [];
    let bytes = 0;
    for (const piece of this.encoded()) {
      joined.push(piece);
      bytes += piece.length;
      if (bytes < least) continue;
      yield joined.length === 1 ? piece : Buffer.concat(joined, bytes);
      joined = [];
      bytes = 0;
    }
    if (bytes > 0) yield joined.length === 1 ? joined[0]! : Buffer.concat(joined, bytes);
  }

  private *encoded(): Generator<Buffer> {
    if (this.kept) return yield* this.kept.pieces;
    for (let from = 0; from < this.items.length; from += 1000) {
      const pieces: Buffer[] = [];
      encode(this.items.slice(from, from + 1000), (piece) => pieces.push(piece));
      yield* pieces;
    }
  }

  /** Whether line `i` is the bytes `buf[start, end)`. */
  equals(i: number, buf: Buffer, start: number, end: number): boolean {
    if (!this.kept) {
      const line = this.items[i]!.line;
      const bytes = line.length * 3 <= PIECE ? SCRATCH : Buffer.allocUnsafe(line.length * 3);
      const n = bytes.write(line, 0);
      return n === end - start && buf.compare(bytes, 0, n, start, end) === 0;
    }
    const s = this.kept.starts[i]!;
    const e = this.kept.ends[i]!;
    return e - s === end - start && buf.compare(this.kept.pieces[this.kept.piece[i]!]!, s, e, start, end) === 0;
  }
}

/** Encodes the lines into pieces, each handed to `onPiece` once full; `onLine` is told where each line went in the piece being filled. */
function encode(items: readonly Keyed[], onPiece: (piece: Buffer) => void, onLine?: (i: number, start: number, end: number) => void): void {
  let buffer = Buffer.allocUnsafe(0);
  let at = 0;
  for (let i = 0; i < items.length; i++) {
    const line = items[i]!.line;
    // A UTF-16 unit takes at most 3 bytes: a line that may not fit starts a new piece.
    const most = line.length * 3 + 1;
    if (at + most > buffer.length) {
      if (at > 0) onPiece(buffer.subarray(0, at));
      buffer = Buffer.allocUnsafe(Math.max(PIECE, most));
      at = 0;
    }
    const start = at;
    at += buffer.write(line, at);
    onLine?.(i, start, at);
    buffer[at++] = 0x0a;
  }
  // The last piece, mostly empty, is copied to its size: a small export's bytes are kept until its diff ends.
  if (at > 0) onPiece(at * 2 < buffer.length ? Buffer.from(buffer.subarray(0, at)) : buffer.subarray(0, at));
}
