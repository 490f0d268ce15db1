import { LineTooLong, MAX_LINE_CHARS } from '../records/lines.js';
import { exportRecord } from '../records/sources.js';

// The record lines of a byte stream, handed over in place (a buffer and a range), for the
// hash diff: no string per line. The same lines as `lineBatches` and `exportLines` (lines.ts,
// sources.ts) give: blank lines skipped, a CR before the LF dropped, and for an export the
// line trimmed and a `-o json` array's brackets and commas taken off.

/** Receives one record line: `line[start, end)`. */
type OnLine = (line: Buffer, start: number, end: number) => void;

const LF = 0x0a;
const CR = 0x0d;
/** A UTF-16 unit of a line takes at most 3 bytes: a pending line past this is surely too long. */
const MAX_LINE_BYTES = 3 * MAX_LINE_CHARS;

const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === CR || c === LF || c === 0x0b || c === 0x0c;

export class LineSplitter {
  private pieces: Buffer[] = [];
  private pending = 0;
  /** Lines ended so far, for the number in LineTooLong. */
  private ended = 0;

  constructor(
    private readonly onLine: OnLine,
    /** An export: lines trimmed, and a JSON array's `[`, `]` and trailing commas taken off. */
    private readonly decorated: boolean,
  ) {}

  push(chunk: Buffer): void {
    let from = 0;
    if (this.pieces.length) {
      const nl = chunk.indexOf(LF);
      if (nl === -1) return this.keep(chunk, 0);
      this.pieces.push(chunk.subarray(0, nl));
      const line = Buffer.concat(this.pieces);
      this.pieces = [];
      this.pending = 0;
      this.line(line, 0, line.length);
      from = nl + 1;
    }
    from = this.lines(chunk, from);
    if (from < chunk.length) this.keep(chunk, from);
  }

  /**
   * The whole lines of a chunk from `from`; returns where the rest starts. A loop alone in its
   * function: V8 compiled push's loop on its own (OSR) before the code after it had run, and
   * that code left it at every chunk of the worker's side (--trace-deopt: one a chunk).
   */
  private lines(chunk: Buffer, from: number): number {
    for (let nl = chunk.indexOf(LF, from); nl !== -1; nl = chunk.indexOf(LF, from)) {
      this.line(chunk, from, nl);
      from = nl + 1;
    }
    return from;
  }

  /** The chunk is the stream's: keep a copy of its rest, not a view that holds it. */
  private keep(chunk: Buffer, from: number): void {
    this.pieces.push(Buffer.from(chunk.subarray(from)));
    this.pending += chunk.length - from;
    if (this.pending > MAX_LINE_BYTES) throw new LineTooLong(this.ended + 1);
  }

  end(): void {
    if (!this.pieces.length) return;
    const line = Buffer.concat(this.pieces);
    this.pieces = [];
    this.line(line, 0, line.length);
  }

  private line(buf: Buffer, start: number, end: number): void {
    this.ended++;
    if (end - start > MAX_LINE_CHARS && buf.toString('utf8', start, end).length > MAX_LINE_CHARS) throw new LineTooLong(this.ended);
    if (end > start && buf[end - 1] === CR) end--;
    if (this.decorated) this.exportLine(buf, start, end);
    else if (!blank(buf, start, end)) this.onLine(buf, start, end);
  }

  /** exportRecord's `trim`, brackets and comma (sources.ts), on bytes; an edge past ASCII (a BOM, say) goes through exportRecord itself. */
  private exportLine(buf: Buffer, start: number, end: number): void {
    while (start < end && isSpace(buf[start]!)) start++;
    while (end > start && isSpace(buf[end - 1]!)) end--;
    if (start === end) return;
    if (buf[start]! >= 0x80 || buf[end - 1]! >= 0x80) return this.exportString(buf.toString('utf8', start, end));
    const n = end - start;
    const first = buf[start];
    if (n === 1 && (first === 0x5b || first === 0x5d)) return;
    if (n === 2 && first === 0x5b && buf[start + 1] === 0x5d) return;
    if (buf[end - 1] === 0x2c) end--;
    this.onLine(buf, start, end);
  }

  private exportString(text: string): void {
    const line = exportRecord(text);
    if (line === undefined) return;
    const bytes = Buffer.from(line, 'utf8');
    this.onLine(bytes, 0, bytes.length);
  }
}

/** `line.trim() === ''` for a line of ASCII; one with other bytes is not blank unless its text is. */
function blank(buf: Buffer, start: number, end: number): boolean {
  let ascii = true;
  for (let i = start; i < end; i++) {
    const c = buf[i]!;
    if (c >= 0x80) ascii = false;
    else if (!isSpace(c)) return false;
  }
  return ascii || buf.toString('utf8', start, end).trim() === '';
}
