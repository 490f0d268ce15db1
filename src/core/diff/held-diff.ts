import { afterLast, type KeyStats } from '../records/keyed.js';
import { LineSplitter } from './byte-lines.js';
import type { LineBytes } from '../records/line-bytes.js';
import { ChangeTally } from './change-tally.js';
import type { Change, DiffCounts } from './merge-diff.js';
import type { KeyOf } from '../records/record-key.js';

// The diff of a stored snapshot, read as bytes, against an export held in memory in key order
// (one just staged, SnapshotCapture.inOrder, held as its lines' bytes and keys): what
// diffSorted does with both sides keyed, with either side's lines decoded only where needed.
// On a night where most of a list is as it was, most of its lines are the very bytes of the
// line held at the same place of the newer side: that line is unchanged, its key the held
// one, and neither is decoded (decoding the stored side to text was a third of the diff's
// cost; reading each key from its line again was another third). A held line is decoded only
// when it is reported, or compared with a stored line of its key that differs.

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
 * Merges the older side's lines (its bytes, gunzipped: read as lineBatches reads them, in key
 * order, repeats of a key dropped, lines without it left out, a line out of order an error:
 * as keyedInOrder reads them) with `newer`, and hands the changes to `emit` in batches, in key
 * order; the counts are diffSorted's.
 */
export async function diffHeld(older: AsyncIterable<Buffer>, held: LineBytes, options: HeldDiffOptions, emit: (changes: Change[]) => Promise<void>): Promise<DiffCounts> {
  const tally = new ChangeTally(options);
  const { olderKey, stats } = options;
  const n = held.count;
  let j = 0;
  let last: string | undefined;
  const lines = new LineSplitter((buf, start, end) => {
    // The line held next, byte for byte: its text and key, undecoded. Anything else is decoded, read, and checked for order.
    const same = j < n && held.equals(j, buf, start, end);
    const line = same ? undefined : buf.toString('utf8', start, end);
    const key = line === undefined ? held.key(j) : olderKey(line);
    if (key === undefined) {
      stats.missingKey++;
      return;
    }
    if (!afterLast(key, last, stats, options.where)) return;
    last = key;
    for (; j < n && held.key(j) < key; j++) tally.gained(held.line(j));
    if (line === undefined) {
      // The held line, byte for byte: nothing to decode.
      tally.counts.unchanged++;
      j++;
    } else if (j < n && held.key(j) === key) tally.matched(line, held.line(j++));
    else tally.lost(line);
  }, false);
  for await (const chunk of older) {
    options.signal?.throwIfAborted();
    lines.push(chunk);
    if (tally.full) await tally.flush(emit);
  }
  lines.end();
  for (; j < n; j++) tally.gained(held.line(j));
  await tally.flush(emit);
  return tally.settled();
}
