import type { Keyed } from './keyed.js';

// Record lines as UTF-8, each ended by LF, in pieces of about 64 KiB: what a snapshot's data
// file holds before gzip (store.ts), encoded once. For an export held in memory (one just
// staged) the pieces are kept with where each line is, and its diff compares the stored
// snapshot's bytes with them (held-diff.ts): a line found the same is never decoded. Decoding
// the stored side to text was a third of that diff's cost, on a night where most lines are
// as they were.

const PIECE = 64 * 1024;

export class LineBytes {
  /** The bytes, each piece whole lines (a line longer than a piece is a piece of its own). */
  readonly pieces: Buffer[] = [];
  /** Per line: its piece, and its bytes' start and end (LF left out) in that piece. */
  private readonly piece: Int32Array;
  private readonly starts: Int32Array;
  private readonly ends: Int32Array;

  constructor(readonly items: readonly Keyed[]) {
    const n = items.length;
    [this.piece, this.starts, this.ends] = [new Int32Array(n), new Int32Array(n), new Int32Array(n)];
    let buffer = Buffer.allocUnsafe(0);
    let at = 0;
    for (let i = 0; i < n; i++) {
      const line = items[i]!.line;
      // A UTF-16 unit takes at most 3 bytes: a line that may not fit starts a new piece.
      const most = line.length * 3 + 1;
      if (at + most > buffer.length) {
        if (at > 0) this.pieces.push(buffer.subarray(0, at));
        buffer = Buffer.allocUnsafe(Math.max(PIECE, most));
        at = 0;
      }
      this.piece[i] = this.pieces.length;
      this.starts[i] = at;
      at += buffer.write(line, at);
      this.ends[i] = at;
      buffer[at++] = 0x0a;
    }
    if (at > 0) this.pieces.push(buffer.subarray(0, at));
  }

  get count(): number {
    return this.items.length;
  }

  /** Whether line `i` is the bytes `buf[start, end)`. */
  equals(i: number, buf: Buffer, start: number, end: number): boolean {
    const s = this.starts[i]!;
    const e = this.ends[i]!;
    return e - s === end - start && buf.compare(this.pieces[this.piece[i]!]!, s, e, start, end) === 0;
  }
}
