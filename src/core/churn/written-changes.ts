import { changeLine } from './change-lines.js';
import type { Keyed } from './keyed.js';
import type { Change } from './merge-diff.js';

// A thread's changes of a hash diff, in key order, written as their NDJSON lines into bytes
// by the thread that found them, once its joins are done: the worker writes its own while the
// main thread writes its, and the main thread then only merges the two by key, copying bytes.
// Written on the main thread alone after the joins, they took ~60 ms of its CPU for the bench's
// 60,608 changes; kept as strings until the merge (a first try), the lines survived V8's young
// generation and cost more CPU and 15-20 MiB more peak memory than they saved (issue 22). Bytes
// live outside the JS heap, and cross to the main thread without a copy.

/** Changes in key order, written: line i is bytes[ends[i - 1] ?? 0, ends[i]). */
export interface WrittenChanges {
  keys: string[];
  bytes: Uint8Array<ArrayBuffer>;
  ends: Int32Array<ArrayBuffer>;
  /**
   * Lines written: those of the changes before the first one whose line cannot be written
   * (changeLine throws). That one and any after stay encoded in `unwritten`: the merge writes
   * them when it reaches them, and so fails where the main thread alone failed.
   */
  written: number;
  unwritten: string[];
}

/** Lines written into the bytes at once: one call into Buffer#write a line cost ~10 ms a thread. */
const WRITE_LINES = 256;

/** Writes encoded changes (change-order.ts' encodeChange), in key order, as their NDJSON lines. */
export function writeChanges(items: readonly Keyed[], renames: boolean, decode: (encoded: string) => Change): WrittenChanges {
  const ends = new Int32Array(items.length);
  let bytes = Buffer.allocUnsafeSlow(estimate(items));
  let at = 0;
  let written = 0;
  let failed = false;
  while (written < items.length && !failed) {
    let text = '';
    const to = Math.min(items.length, written + WRITE_LINES);
    let i = written;
    for (; i < to; i++) {
      try {
        text += changeLine(decode(items[i]!.line), renames);
      } catch {
        failed = true;
        break;
      }
    }
    // At most three bytes a UTF-16 unit.
    if (bytes.length - at < text.length * 3) bytes = grown(bytes, at, text.length * 3);
    const end = at + bytes.write(text, at);
    // Each line ends with the one line break it has (JSON escapes any other).
    for (let b = at; b < end; b++) if (bytes[b] === 0x0a) ends[written++] = b + 1;
    at = end;
  }
  return { keys: items.map((item) => item.key), bytes: bytes.subarray(0, at), ends, written, unwritten: items.slice(written).map((item) => item.line) };
}

/** The changes' encoded text and a little more: a line is its record line and the change's name. */
const estimate = (items: readonly Keyed[]) => items.reduce((n, item) => n + item.line.length, 0) + 32 * items.length + 1024;

/** A larger buffer of its own (one a thread may transfer), the bytes used copied. */
function grown(bytes: Buffer<ArrayBuffer>, used: number, more: number): Buffer<ArrayBuffer> {
  const next = Buffer.allocUnsafeSlow(Math.max(bytes.length * 2, used + more));
  bytes.copy(next, 0, 0, used);
  return next;
}

/** The written changes as strings again: lines, or encoded changes past `written` (for a merge with encoded ones). */
export function asKeyed(changes: WrittenChanges): Keyed[] {
  const text = Buffer.from(changes.bytes.buffer, changes.bytes.byteOffset, changes.bytes.length);
  return changes.keys.map((key, i) => ({ key, line: i < changes.written ? text.toString('utf8', i ? changes.ends[i - 1] : 0, changes.ends[i]) : changes.unwritten[i - changes.written]! }));
}

/** Changes handed on at a time: as many as ChangeOrder's batches, so that a failure leaves what it left before. */
const BATCH = 1000;

/**
 * The NDJSON lines of two threads' written changes merged by key, in chunks of BATCH changes:
 * ties go to `a`, and a key already given is left out, as ExternalSort's merge does. `rest`
 * writes a change left encoded (it throws what the main thread alone threw there).
 */
export function* mergeWritten(a: WrittenChanges, b: WrittenChanges, rest: (encoded: string) => string): Generator<Uint8Array> {
  let out = Buffer.allocUnsafeSlow(256 * 1024);
  let at = 0;
  let count = 0;
  let last: string | undefined;
  const cursors = [0, 0];
  for (;;) {
    const aKey = a.keys[cursors[0]!];
    const bKey = b.keys[cursors[1]!];
    if (aKey === undefined && bKey === undefined) break;
    const s = bKey === undefined || (aKey !== undefined && aKey <= bKey) ? 0 : 1;
    const side = s ? b : a;
    const n = cursors[s]!++;
    const key = side.keys[n]!;
    if (key === last) continue;
    last = key;
    const line = n < side.written ? side.bytes.subarray(n ? side.ends[n - 1] : 0, side.ends[n]) : Buffer.from(rest(side.unwritten[n - side.written]!));
    if (at + line.length > out.length) out = grown(out, at, line.length);
    out.set(line, at);
    at += line.length;
    if (++count === BATCH) {
      yield out.subarray(0, at);
      [out, at, count] = [Buffer.allocUnsafeSlow(out.length), 0, 0];
    }
  }
  if (at) yield out.subarray(0, at);
}
