import { closeSync, openSync, readSync } from 'node:fs';
import { copyBytes, viewOf } from '../bytes.js';
import { writeAll } from '../../fs/atomic.js';
import { join } from 'node:path';
import { PRIVATE_FILE } from '../../fs/modes.js';
import { tempPath } from '../../fs/temp-names.js';
import { removeFile } from '../../fs/remove.js';

// The partitions of a hash diff: each side's records split by the hash of their key, so that
// one partition of the older side fits in memory at a time. A record is kept in a binary form
// (a header, the line, the key when it is not in the line), so that it is never read for its
// key again. Partition 0 stays in memory while it is small enough; the others are spilled to
// files under sgq's temporary names in the temporary folder.

/** The record header: hash, line length, key offset in the line (-1: after it), key length. */
const HEADER = 16;
const BLOCK = 256 * 1024;

/** writeUInt32LE without its checks (a profile showed them): the header is always in range. */
function put32(b: Buffer, at: number, value: number): void {
  b[at] = value;
  b[at + 1] = value >>> 8;
  b[at + 2] = value >>> 16;
  b[at + 3] = value >>> 24;
}

/** readInt32LE without its checks, for the header put32 wrote (lengths are below 2^31). */
const get32 = (b: Buffer, at: number): number => b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24);

/** Receives one record of a partition. */
export type OnRecord = (line: Buffer, lineStart: number, lineEnd: number, key: Buffer, keyStart: number, keyEnd: number, hash: number) => void;

export class Part {
  /** Filled blocks not yet written (or, kept in memory, all of them). */
  private blocks: Buffer[] = [];
  private block = Buffer.allocUnsafe(0);
  /** The block's DataView, for copyBytes. */
  private view = viewOf(this.block);
  private used = 0;
  private fd: number | undefined;
  path: string | undefined;
  bytes = 0;
  records = 0;

  constructor(
    readonly dir: string,
    /** Kept in memory until it holds this many bytes (0: spilled from the start). */
    private readonly keepUpTo: number,
    /** The file it spills to, when another thread must know it beforehand (to remove it). */
    private readonly spillTo?: string,
  ) {}

  /** Takes over a partition another thread wrote to `path`, sealed. */
  static written(dir: string, path: string | undefined, bytes: number, records: number): Part {
    const part = new Part(dir, 0);
    Object.assign(part, { path, bytes, records });
    return part;
  }

  add(line: Buffer, ls: number, le: number, key: Buffer, ks: number, ke: number, hash: number): void {
    const inLine = key === line && ks >= ls && ke <= le;
    const size = HEADER + (le - ls) + (inLine ? 0 : ke - ks);
    if (this.used + size > this.block.length) this.nextBlock(size);
    const b = this.block;
    let at = this.used;
    put32(b, at, hash);
    put32(b, at + 4, le - ls);
    put32(b, at + 8, inLine ? ks - ls : -1);
    put32(b, at + 12, ke - ks);
    at += HEADER;
    at = copyBytes(line, ls, le, b, this.view, at);
    if (!inLine) at = copyBytes(key, ks, ke, b, this.view, at);
    this.used = at;
    this.bytes += size;
    this.records++;
  }

  private nextBlock(size: number): void {
    if (this.used) this.blocks.push(this.block.subarray(0, this.used));
    this.used = 0;
    // Written at once, a spilled block is used again: reading a side makes no garbage here.
    if (this.fd !== undefined || this.bytes > this.keepUpTo) {
      this.spill();
      if (this.block.length >= size) return;
    }
    this.block = Buffer.allocUnsafe(Math.max(BLOCK, size));
    this.view = viewOf(this.block);
  }

  private spill(): void {
    if (this.fd === undefined) {
      this.path = this.spillTo ?? partitionPath(this.dir);
      this.fd = openSync(this.path, 'wx', PRIVATE_FILE);
    }
    // writeAll: a short write would leave the partition without some of its lines.
    for (const block of this.blocks) writeAll(this.fd, block);
    this.blocks = [];
  }

  /** Closes the spill file once: its number is forgotten first, so no later close reaches a file opened since. */
  private closeFd(): void {
    const fd = this.fd;
    this.fd = undefined;
    if (fd !== undefined) closeSync(fd);
  }

  /** Whether nothing of it was spilled. */
  get inMemory(): boolean {
    return this.path === undefined;
  }

  /** Ends writing: whatever is spilled is closed; the rest stays in memory, or goes to the file too (`toDisk`). */
  seal(toDisk = false): void {
    if (this.used) this.blocks.push(this.block.subarray(0, this.used));
    this.block = Buffer.allocUnsafe(0);
    this.view = viewOf(this.block);
    this.used = 0;
    if (this.fd !== undefined || (toDisk && this.bytes > 0)) {
      this.spill();
      this.closeFd();
    }
  }

  /** The whole partition in one buffer: `scratch.buffer`, replaced by a larger one when it is too small. */
  async load(scratch: { buffer: Buffer }): Promise<Buffer> {
    if (scratch.buffer.length < this.bytes) scratch.buffer = Buffer.allocUnsafe(Math.ceil(this.bytes * 1.25));
    const into = scratch.buffer;
    let at = 0;
    if (this.path !== undefined) {
      // Read at once: the file was just written (it is in the page cache), and a wait on the
      // thread pool per read left both threads idle under load. The caller yields between partitions.
      const fd = openSync(this.path, 'r');
      try {
        for (let got = -1; got !== 0 && at < this.bytes; at += got) got = readSync(fd, into, at, this.bytes - at, at);
      } finally {
        closeSync(fd);
      }
    }
    for (const block of this.blocks) at += block.copy(into, at);
    return into.subarray(0, at);
  }

  /** The partition in buffers of whole records, read a block at a time. */
  *chunks(): Generator<Buffer> {
    if (this.path !== undefined) yield* fileChunks(this.path);
    yield* this.blocks;
  }

  discard(): void {
    this.closeFd();
    if (this.path !== undefined) removeFile(this.path);
    this.path = undefined;
    this.blocks = [];
  }
}

/** A fresh name for a spilled partition, under sgq's temporary names. */
export const partitionPath = (dir: string): string => tempPath(join(dir, 'diff.part'));

/** A spilled partition's records, in buffers that each end on a record's end. */
function* fileChunks(path: string): Generator<Buffer> {
  // Read at once, as `load` reads.
  const fd = openSync(path, 'r');
  try {
    let buffer = Buffer.allocUnsafe(4 * BLOCK);
    let held = 0;
    for (;;) {
      const bytesRead = readSync(fd, buffer, held, buffer.length - held, null);
      const filled = held + bytesRead;
      const whole = wholeRecords(buffer, filled);
      if (bytesRead === 0) {
        if (whole < filled) throw new Error(`${path}: a partition ends inside a record`);
        return;
      }
      // A view: the reader is done with it before the next read.
      if (whole) yield buffer.subarray(0, whole);
      held = filled - whole;
      // The record cut at the end moves to the front; one longer than the buffer gets a larger one.
      const need = held ? recordSize(buffer, whole, filled) : 0;
      const next = need > buffer.length ? Buffer.allocUnsafe(2 * need) : buffer;
      buffer.copy(next, 0, whole, filled);
      buffer = next;
    }
  } finally {
    closeSync(fd);
  }
}

const recordSize = (b: Buffer, at: number, end: number) => (end - at < HEADER ? HEADER : HEADER + b.readUInt32LE(at + 4) + (b.readInt32LE(at + 8) < 0 ? b.readUInt32LE(at + 12) : 0));

/** Where the last whole record in `b[0, end)` ends. */
function wholeRecords(b: Buffer, end: number): number {
  let at = 0;
  for (;;) {
    const size = recordSize(b, at, end);
    if (at + size > end) return at;
    at += size;
  }
}

/**
 * What takes a partition's records, one call each: a method of a class, not a closure. Closures
 * made for each partition were each a new call target, and `--trace-deopt` showed the join's
 * optimised code dropped at each one's first call ("wrong call target"); traced per partition,
 * each thread's first partitions took 3 to 8 times the later ones' time (issue 22).
 */
export interface RecordSink {
  record(line: Buffer, lineStart: number, lineEnd: number, key: Buffer, keyStart: number, keyEnd: number, hash: number): void;
}

/** Hands `sink` every record of a buffer of whole records. */
export function eachRecord(b: Buffer, sink: RecordSink): void {
  for (let at = 0; at < b.length; ) {
    const hash = get32(b, at);
    const lineLength = get32(b, at + 4);
    const keyAt = get32(b, at + 8);
    const keyLength = get32(b, at + 12);
    const ls = at + HEADER;
    const le = ls + lineLength;
    const ks = keyAt < 0 ? le : ls + keyAt;
    sink.record(b, ls, le, b, ks, ks + keyLength, hash);
    at = le + (keyAt < 0 ? keyLength : 0);
  }
}

/** One side's partitions; a record goes to the one its hash's high bits name. */
export class Partitions implements RecordSink {
  readonly parts: Part[];
  private readonly shift: number;

  constructor(
    count: number,
    dir: string,
    firstInMemoryUpTo: number,
    /** High bits of the hash that chose the partition being split again: the next ones choose here. */
    readonly usedBits = 0,
    /** The files to spill to, one a partition, named beforehand. */
    paths?: string[],
  ) {
    this.parts = Array.from({ length: count }, (_, i) => new Part(dir, i === 0 ? firstInMemoryUpTo : 0, paths?.[i]));
    this.bits = Math.log2(count);
    this.shift = 32 - this.bits;
  }

  readonly bits: number;

  /** The partition of a hash (count is a power of two). */
  of(hash: number): number {
    return this.bits === 0 ? 0 : (hash << this.usedBits) >>> this.shift;
  }

  readonly add: OnRecord = (line, ls, le, key, ks, ke, hash) => this.parts[this.of(hash)]!.add(line, ls, le, key, ks, ke, hash);

  record(line: Buffer, ls: number, le: number, key: Buffer, ks: number, ke: number, hash: number): void {
    this.parts[this.of(hash)]!.add(line, ls, le, key, ks, ke, hash);
  }

  seal(toDisk = false): void {
    for (const part of this.parts) part.seal(toDisk);
  }

  /** Partitions another thread wrote to `paths`, of these sizes. */
  static written(dir: string, paths: readonly (string | undefined)[], sizes: { bytes: number; records: number }[]): Partitions {
    const written = new Partitions(paths.length, dir, 0);
    sizes.forEach(({ bytes, records }, i) => (written.parts[i] = Part.written(dir, bytes ? paths[i] : undefined, bytes, records)));
    return written;
  }

  discard(): void {
    for (const part of this.parts) part.discard();
  }
}
