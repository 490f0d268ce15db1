import type { KeyOf } from './record-key.js';

/** A record line with its key: what sorting, storing and diffing pass along. */
export interface Keyed {
  key: string;
  line: string;
}

/**
 * Reads a stream of batches one item at a time. `advance` is synchronous within a batch;
 * only the step to the next batch awaits, so millions of items cost no promise each.
 */
export class Cursor<T> {
  private batch: T[] = [];
  private index = 0;
  current!: T;

  constructor(
    private readonly source: AsyncIterator<T[]>,
    /** Checked before each batch is fetched: a stop ends a long merge within a batch. */
    private readonly signal?: AbortSignal,
  ) {}

  /** Moves to the next item; false at the end. Throws the signal's reason once it is aborted. */
  async next(): Promise<boolean> {
    if (this.advance()) return true;
    for (;;) {
      this.signal?.throwIfAborted();
      const step = await this.source.next();
      if (step.done) return false;
      this.batch = step.value;
      this.index = 0;
      if (this.advance()) return true;
    }
  }

  /** Moves within the current batch; false when it is used up (then call `next`). */
  advance(): boolean {
    if (this.index >= this.batch.length) return false;
    this.current = this.batch[this.index++]!;
    return true;
  }

  async close(): Promise<void> {
    await this.source.return?.();
  }
}

/** What was left out while keying: lines without the key, and repeats of a key. */
export interface KeyStats {
  missingKey: number;
  duplicates: number;
}

/**
 * Keys lines that are already in key order (a stored snapshot), dropping repeats, and
 * failing on a line out of order: a merge over such a file would give wrong answers.
 */
export async function* keyedInOrder(batches: AsyncIterable<string[]>, keyOf: KeyOf, stats: KeyStats, where: string): AsyncGenerator<Keyed[]> {
  let last: string | undefined;
  for await (const lines of batches) {
    const out: Keyed[] = [];
    for (const line of lines) {
      const key = keyOf(line);
      if (key === undefined) {
        stats.missingKey++;
        continue;
      }
      if (!afterLast(key, last, stats, where)) continue;
      last = key;
      out.push({ key, line });
    }
    if (out.length) yield out;
  }
}

/**
 * Whether a sorted side's key comes after the last one read: false for a repeat (counted, and
 * skipped: a snapshot holds each account once); a key before it throws (the side is not sorted).
 */
export function afterLast(key: string, last: string | undefined, stats: { duplicates: number }, where: string): boolean {
  if (last === undefined || key > last) return true;
  if (key === last) {
    stats.duplicates++;
    return false;
  }
  throw new Error(`${where} is not in key order (${JSON.stringify(key)} after ${JSON.stringify(last)})`);
}
