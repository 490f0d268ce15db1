import { viewOf } from '../bytes.js';
import { keyReader, type KeyOf } from '../records/record-key.js';

// The key of a record line read straight from its bytes, for the hash diff and the merge of
// two stored snapshots (stored-side.ts): most lines are read without decoding them to a
// string, let alone parsing them. It makes the same decisions as `keyReader` (record-key.ts)
// on the same text, and hands the lines it is unsure of to it, so that both read every line alike.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN = 0x7b;
const CLOSE = 0x7d;
/** Not in any UTF-8 text: marks a key that is not well-formed UTF-16 (a lone surrogate, from an escape). */
const ODD = Buffer.from([0xff]);

/**
 * FNV-1a over bytes, finished with murmur3's mix so that every bit of the result depends on
 * every byte. A signed 32-bit integer: V8 keeps it unboxed, where an unsigned one past 2^31
 * is a heap number made for every call (the profile's scavenges, two million records a side).
 */
function hashBytes(buf: Buffer, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) h = Math.imul(h ^ buf[i]!, 0x01000193);
  return finish(h);
}

function finish(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/**
 * A key as bytes: its UTF-8, so that equal keys are equal bytes; a key that is not
 * well-formed UTF-16 (which UTF-8 cannot hold) as its UTF-16 behind a byte no UTF-8 has.
 */
export function keyBytes(key: string): Buffer {
  return LONE_SURROGATE.test(key) ? Buffer.concat([ODD, Buffer.from(key, 'utf16le')]) : Buffer.from(key, 'utf8');
}

/** The key whose bytes keyBytes gave (or a scan found in a line): its text again. */
export function keyText(buf: Buffer, start: number, end: number): string {
  return buf[start] === ODD[0] ? buf.toString('utf16le', start + 1, end) : buf.toString('utf8', start, end);
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Reads one field of record lines held as bytes. After `read` returns true, `buf`, `start`
 * and `end` hold the key's bytes (inside the line, or a buffer of their own) and `hash` their hash.
 */
export class ByteKeyReader {
  buf: Buffer = Buffer.alloc(0);
  start = 0;
  end = 0;
  hash = 0;
  /** Whether the key's bytes are ASCII (known so only from a scan of the line): its bytes then sort as its text does. */
  ascii = false;
  private readonly first: Buffer;
  /** `first`'s whole four-byte words, big-endian, as a view reads them. */
  private readonly firstWords: Int32Array;
  private viewed: Buffer | undefined;
  private view = viewOf(Buffer.alloc(0));
  private readonly anywhere: Buffer;
  private readonly slow: KeyOf;

  constructor(readonly field: string) {
    const quoted = JSON.stringify(field);
    this.first = Buffer.from(`{${quoted}:"`);
    const words = viewOf(this.first);
    this.firstWords = Int32Array.from({ length: this.first.length >> 2 }, (_, i) => words.getInt32(4 * i));
    this.anywhere = Buffer.from(`${quoted}:`);
    this.slow = keyReader(field);
  }

  /** False when the line has no such field (or it is null). Throws NotARecord as keyReader does. */
  read(line: Buffer, start: number, end: number): boolean {
    if (this.startsWithField(line, start, end)) {
      const from = start + this.first.length;
      const to = line.indexOf(QUOTE, from);
      if (to !== -1 && to < end && this.plain(line, from, to)) return true;
    }
    const found = this.readFlat(line, start, end);
    return found === undefined ? this.parsed(line, start, end) : found;
  }

  /**
   * The prefix compared four bytes at a time through a view of the line's buffer of its own
   * (one a chunk): sameBytes' views of the last buffers it was given are for the lines a merge
   * or a join compares, which this prefix would push out (a DataView made for every line).
   */
  private startsWithField(line: Buffer, start: number, end: number): boolean {
    const { first, firstWords } = this;
    const n = first.length;
    if (end - start < n) return false;
    if (line !== this.viewed) {
      this.viewed = line;
      this.view = viewOf(line);
    }
    let i = 0;
    for (; i + 4 <= n; i += 4) if (this.view.getInt32(start + i) !== firstWords[i >> 2]) return false;
    for (; i < n; i++) if (line[start + i] !== first[i]) return false;
    return true;
  }

  /** Takes [from, to) as the key when it holds no escape; bytes past ASCII are made canonical UTF-8 first. */
  private plain(line: Buffer, from: number, to: number): boolean {
    let h = 0x811c9dc5;
    let ascii = true;
    for (let i = from; i < to; i++) {
      const c = line[i]!;
      if (c === BACKSLASH) return false;
      if (c >= 0x80) ascii = false;
      h = Math.imul(h ^ c, 0x01000193);
    }
    if (ascii) this.take(line, from, to, finish(h), true);
    else this.own(Buffer.from(line.toString('utf8', from, to), 'utf8'));
    return true;
  }

  private take(buf: Buffer, start: number, end: number, hash: number, ascii: boolean): void {
    this.buf = buf;
    this.ascii = ascii;
    this.start = start;
    this.end = end;
    this.hash = hash;
  }

  private own(bytes: Buffer): void {
    this.take(bytes, 0, bytes.length, hashBytes(bytes, 0, bytes.length), false);
  }

  /** keyReader's `readFlat` on bytes: true or false when decided, undefined when the line must be parsed. */
  private readFlat(line: Buffer, start: number, end: number): boolean | undefined {
    const anywhere = this.anywhere;
    const at = end - start >= anywhere.length ? line.lastIndexOf(anywhere, end - anywhere.length) : -1;
    if (at <= start) return undefined;
    const brace = line.indexOf(OPEN, start + 1);
    if (brace !== -1 && brace < end) return undefined;
    const before = line[at - 1];
    if (before !== COMMA && !(before === OPEN && at === start + 1)) return undefined;
    const from = at + anywhere.length;
    if (from < end && line[from] === QUOTE) {
      const to = line.indexOf(QUOTE, from + 1);
      return to === -1 || to >= end || !this.plain(line, from + 1, to) ? undefined : true;
    }
    let to = from;
    while (to < end && line[to] !== COMMA && line[to] !== CLOSE) to++;
    if (to - from === 4 && line.toString('latin1', from, to) === 'null') return false;
    if (!isInteger(line, from, to)) return undefined;
    this.take(line, from, to, hashBytes(line, from, to), true);
    return true;
  }

  private parsed(line: Buffer, start: number, end: number): boolean {
    const key = this.slow(line.toString('utf8', start, end));
    if (key === undefined) return false;
    this.own(keyBytes(key));
    return true;
  }
}

/** /^(?:0|-?[1-9]\d*)$/ on bytes: a canonical JSON integer, whose text is the parser's too. */
function isInteger(line: Buffer, from: number, to: number): boolean {
  let i = from;
  if (i < to && line[i] === 0x2d /* - */) i++;
  if (i >= to) return false;
  if (line[i] === 0x30 /* 0 */) return i + 1 === to && i === from;
  for (; i < to; i++) if (line[i]! < 0x30 || line[i]! > 0x39) return false;
  return true;
}
