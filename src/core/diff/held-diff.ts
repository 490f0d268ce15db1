import { afterLast, type Keyed, type KeyStats } from './keyed.js';
import { emptyCounts, renamedFrom, settled, type Change, type ChangeKind, type DiffCounts } from './merge-diff.js';
import type { KeyOf } from './record-key.js';

// The diff of a stored snapshot, read as lines, against an export held in memory in key order
// (one just staged, SnapshotCapture.inOrder): what diffSorted does with both sides keyed, with
// the older side's keys read only where needed. On a night where most of a list is as it was,
// most of its lines are the very line held at the same place of the newer side: that line's
// key is the held one, and reading it from the line again was a third of the diff's cost.

const BATCH = 1000;

export interface HeldDiffOptions {
  changed: boolean;
  signal?: AbortSignal;
  names?: { older: KeyOf; newer: KeyOf };
  /** The older side's key, read from a line (its lines are in order of it, as keyedInOrder checks). */
  olderKey: KeyOf;
  /** What keying the older side left out. */
  stats: KeyStats;
  /** The older side, for the error of a line out of order. */
  where: string;
}

/**
 * Merges the older side's lines (in key order, repeats of a key dropped, lines without it left
 * out, a line out of order an error: as keyedInOrder reads them) with `newer`, and hands the
 * changes to `emit` in batches, in key order; the counts are diffSorted's.
 */
export async function diffHeld(older: AsyncIterable<string[]>, newer: readonly Keyed[], options: HeldDiffOptions, emit: (changes: Change[]) => Promise<void>): Promise<DiffCounts> {
  const counts = emptyCounts();
  const { names, olderKey, stats } = options;
  let out: Change[] = [];
  const push = (change: ChangeKind, line: string, from?: string) => out.push(from === undefined ? { change, line } : { change, line, from });
  let j = 0;
  let last: string | undefined;
  for await (const lines of older) {
    options.signal?.throwIfAborted();
    for (const line of lines) {
      // The line held next: its key, unread. Anything else is read, and checked for order.
      const held = j < newer.length && newer[j]!.line === line ? newer[j]! : undefined;
      const key = held ? held.key : olderKey(line);
      if (key === undefined) {
        stats.missingKey++;
        continue;
      }
      if (!afterLast(key, last, stats, options.where)) continue;
      last = key;
      for (; j < newer.length && newer[j]!.key < key; j++) {
        counts.gained++;
        push('gained', newer[j]!.line);
      }
      if (j < newer.length && newer[j]!.key === key) matched(line, newer[j++]!.line);
      else {
        counts.lost++;
        push('lost', line);
      }
    }
    if (out.length >= BATCH) await flush();
  }
  for (; j < newer.length; j++) {
    counts.gained++;
    push('gained', newer[j]!.line);
  }
  await flush();
  return settled(counts, options.changed);

  function matched(before: string, after: string): void {
    let from: string | undefined;
    if (before === after) counts.unchanged++;
    // Only records that differ are read for their names: an unchanged one costs nothing more.
    else if (names && (from = renamedFrom(names, before, after)) !== undefined) {
      counts.renamed++;
      push('renamed', after, from);
    } else {
      counts.changed++;
      if (options.changed) push('changed', after);
    }
  }

  async function flush(): Promise<void> {
    while (out.length) {
      const batch = out.length > BATCH ? out.splice(0, BATCH) : out;
      if (batch === out) out = [];
      await emit(batch);
    }
  }
}
