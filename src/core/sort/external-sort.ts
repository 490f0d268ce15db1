import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { PRIVATE_FILE } from '../../fs/modes.js';
import { tempPath } from '../../fs/temp-names.js';
import { Cursor, type KeyStats, type Keyed } from '../records/keyed.js';
import { lineBatches } from '../records/lines.js';
import { sortKeyed } from '../records/key-order.js';
import { runChunks, runReadBytes } from './run-file.js';
import type { KeyOf } from '../records/record-key.js';
import { removeFile } from '../../fs/remove.js';
import { OLD_SPACE_BYTES } from './old-space.js';

// Sorting more records than fit in memory: sorted runs of a bounded size are spilled to
// files and merged with a heap. Equal keys keep their arrival order, and only the first
// record of a key is kept (a key twice in one export is a page boundary that moved).

/**
 * Characters of record lines held in memory before a run is spilled: a 64th of V8's old
 * generation (old-space.ts; a held line costs two to three times its length), at most 4 Mi,
 * so that both sides of a diff, and the garbage V8 lets pile up, stay well under 200 MiB. A
 * capped heap (`node --max-old-space-size`) gets smaller runs instead of running out.
 */
export const RUN_CHARS = Math.min(4 * 1024 * 1024, Math.floor(OLD_SPACE_BYTES / 64));
/** Runs merged at once (each read through a buffer of its own, run-file.ts); more are first merged into one. */
const FAN_IN = 128;
const BATCH = 1000;
/**
 * Records a merge of runs yields at once: its lines are slices of the chunks read from its
 * runs, which they keep alive until the batch is written and compared. Batches of 1,000 kept
 * some 120 chunks of a merge alive; the nightly job of 8 accounts × 50,000 followers peaked
 * 25-45 MiB higher than with 250.
 */
export const MERGE_BATCH = 250;

/** How a sort holds and merges; each has a default. */
export interface SortOptions {
  /** Characters held before a run is spilled. */
  runChars?: number;
  /** Runs merged at once. */
  fanIn?: number;
  /** Stops a merge between batches (Ctrl-C, SIGTERM), with its reason. */
  signal?: AbortSignal;
}

export class ExternalSort {
  private buffer: Keyed[] = [];
  /** How many of the held records are already in runs in key order (sortRecent). */
  private sortedUpTo = 0;
  private chars = 0;
  private readonly runs: string[] = [];
  readonly stats: KeyStats = { missingKey: 0, duplicates: 0 };

  private readonly runChars: number;
  private readonly fanIn: number;
  private readonly signal?: AbortSignal;

  constructor(
    private readonly keyOf: KeyOf,
    /** Where runs are spilled, under sgq's temporary names (src/fs/temp-names.ts), which a prune of the store sweeps. */
    private readonly dir: string,
    { runChars = RUN_CHARS, fanIn = FAN_IN, signal }: SortOptions = {},
  ) {
    this.runChars = runChars;
    this.fanIn = fanIn;
    this.signal = signal;
  }

  /**
   * Holds `lines`, spilling a run each time what is held reaches the bound: a batch larger
   * than the bound (another thread's changes, handed over while a run was being written) is
   * not held whole on top of what was (the CI failure of test/e2e/churn.test.ts's 32 MiB heap).
   */
  async add(lines: readonly string[]): Promise<void> {
    for (const line of lines) {
      this.hold(this.keyOf(line), line);
      if (this.chars >= this.runChars) await this.spill();
    }
  }

  private hold(key: string | undefined, line: string): void {
    if (key === undefined) {
      this.stats.missingKey++;
      return;
    }
    this.buffer.push({ key, line });
    this.chars += line.length;
  }


  /** Sorts what is held in memory now (a thread that would otherwise wait); `sorted` then finds it in order. */
  sortHeld(): void {
    sortKeyed(this.buffer);
    this.sortedUpTo = this.buffer.length;
  }

  /**
   * Puts the records held since the last call in key order, as a run of their own: the sort
   * at the end (V8's, which finds runs already in order) then only merges the runs. Equal
   * keys keep their arrival order, runs being in arrival order.
   */
  sortRecent(): void {
    const recent = sortKeyed(this.buffer.splice(this.sortedUpTo));
    for (const item of recent) this.buffer.push(item);
    this.sortedUpTo = this.buffer.length;
  }

  /** Once some of it is on disk, puts the rest there too: another sort (the other side of a diff) may fill memory next. */
  async seal(): Promise<void> {
    if (this.runs.length && this.buffer.length) await this.spill();
  }

  /**
   * Every record once, in key order, in batches; the run files are removed at the end.
   * `more` are sources sorted elsewhere (another thread's), merged in after this sort's own.
   */
  async *sorted(more: AsyncIterable<Keyed[]>[] = []): AsyncGenerator<Keyed[]> {
    try {
      const memory = this.takeBuffer();
      const read = runReadBytes(this.runs.length);
      const sources = [...this.runs.map((file) => this.readRun(file, read)), batchesOf(memory), ...more];
      yield* this.merge(sources);
    } finally {
      this.discard();
    }
  }

  /** Removes the run files (after a failure, or once merged). */
  discard(): void {
    for (const file of this.runs.splice(0)) removeFile(file);
  }

  private takeBuffer(): Keyed[] {
    const items = this.buffer;
    this.buffer = [];
    this.sortedUpTo = 0;
    this.chars = 0;
    return sortKeyed(items);
  }

  private async spill(): Promise<void> {
    const file = this.newRun();
    await writeChunks(file, texts(batchesOf(this.takeBuffer())));
    await this.mergeIfMany();
  }

  /** Whether a run is on disk. */
  get spilled(): boolean {
    return this.runs.length > 0;
  }

  /**
   * Lines already in key order, as their bytes (each ended by LF), spilled as a run of their
   * own, after those before it: what a caller holding its lines as bytes spills (capture.ts).
   */
  async addRun(pieces: Iterable<Buffer>): Promise<void> {
    await writeChunks(this.newRun(), pieces);
    await this.mergeIfMany();
  }

  private newRun(): string {
    const file = tempPath(join(this.dir, 'sort.run'));
    this.runs.push(file);
    return file;
  }

  private async mergeIfMany(): Promise<void> {
    if (this.runs.length < this.fanIn) return;
    const merged = tempPath(join(this.dir, 'sort.run'));
    const parts = this.runs.splice(0);
    this.runs.push(merged);
    const read = runReadBytes(parts.length);
    await writeChunks(merged, texts(this.merge(parts.map((f) => this.readRun(f, read)))));
    for (const f of parts) removeFile(f);
  }

  private async *readRun(file: string, bytes: number): AsyncGenerator<Keyed[]> {
    for await (const lines of lineBatches(runChunks(file, bytes))) {
      yield lines.map((line) => ({ key: this.keyOf(line)!, line }));
    }
  }

  /** A k-way merge of sorted sources; ties go to the earlier source, and repeats of a key are dropped. */
  private async *merge(sources: AsyncIterable<Keyed[]>[]): AsyncGenerator<Keyed[]> {
    const heap = new MergeHeap();
    const cursors = sources.map((s) => new Cursor(s[Symbol.asyncIterator](), this.signal));
    try {
      for (let i = 0; i < cursors.length; i++) if (await cursors[i]!.next()) heap.push(i, cursors[i]!.current);
      let out: Keyed[] = [];
      let last: string | undefined;
      while (heap.size) {
        const i = heap.topSource;
        const item = heap.top;
        if (item.key === last) this.stats.duplicates++;
        else {
          out.push(item);
          last = item.key;
        }
        const cursor = cursors[i]!;
        if (cursor.advance() || (await cursor.next())) heap.replaceTop(cursor.current);
        else heap.pop();
        if (out.length >= MERGE_BATCH) {
          yield out;
          out = [];
        }
      }
      if (out.length) yield out;
    } finally {
      await Promise.all(cursors.map((c) => c.close()));
    }
  }
}


/** Items in batches, as the sort yields them. */
export async function* batchesOf(items: readonly Keyed[]): AsyncGenerator<Keyed[]> {
  for (let i = 0; i < items.length; i += BATCH) yield items.slice(i, i + BATCH);
}

/** Each batch's lines as one text, each line ended by LF. */
async function* texts(batches: AsyncIterable<Keyed[]>): AsyncGenerator<string> {
  for await (const batch of batches) {
    let text = '';
    for (const item of batch) text += `${item.line}\n`;
    yield text;
  }
}

async function writeChunks(file: string, chunks: AsyncIterable<string | Buffer> | Iterable<Buffer>): Promise<void> {
  const out = createWriteStream(file, { flags: 'wx', mode: PRIVATE_FILE });
  const failed = once(out, 'error').then(([error]) => Promise.reject(error as Error));
  failed.catch(() => undefined);
  for await (const chunk of chunks) if (!out.write(chunk)) await Promise.race([once(out, 'drain'), failed]);
  out.end();
  await Promise.race([once(out, 'finish'), failed]);
  await closed(out);
}

const closed = (stream: Writable) => (stream.closed ? Promise.resolve() : once(stream, 'close').then(() => undefined));

/** A binary min-heap of (key, source), the source breaking ties so that merges are stable. */
class MergeHeap {
  private keys: Keyed[] = [];
  private sources: number[] = [];

  get size(): number {
    return this.keys.length;
  }
  get top(): Keyed {
    return this.keys[0]!;
  }
  get topSource(): number {
    return this.sources[0]!;
  }

  push(source: number, item: Keyed): void {
    this.keys.push(item);
    this.sources.push(source);
    let i = this.keys.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  replaceTop(item: Keyed): void {
    this.keys[0] = item;
    this.down(0);
  }

  pop(): void {
    const lastKey = this.keys.pop()!;
    const lastSource = this.sources.pop()!;
    if (!this.keys.length) return;
    this.keys[0] = lastKey;
    this.sources[0] = lastSource;
    this.down(0);
  }

  private down(i: number): void {
    const n = this.keys.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < n && this.less(l, m)) m = l;
      if (r < n && this.less(r, m)) m = r;
      if (m === i) return;
      this.swap(i, m);
      i = m;
    }
  }

  private less(a: number, b: number): boolean {
    const ka = this.keys[a]!.key;
    const kb = this.keys[b]!.key;
    return ka < kb || (ka === kb && this.sources[a]! < this.sources[b]!);
  }

  private swap(a: number, b: number): void {
    [this.keys[a], this.keys[b]] = [this.keys[b]!, this.keys[a]!];
    [this.sources[a], this.sources[b]] = [this.sources[b]!, this.sources[a]!];
  }
}
