import type { KeyOf } from '../records/record-key.js';
import { ChangeTally } from './change-tally.js';
import type { Change, DiffCounts } from './merge-diff.js';
import { StoredSide, type StoredSource } from './stored-side.js';

// The diff of two stored snapshots, each in key order, merged as their bytes are read: what
// diffSorted finds over both sides keyed as text, with a line decoded only when it is
// reported or its key's lines differ in bytes (and then compared as text, as diffSorted does).

export interface StoredDiffOptions {
  changed: boolean;
  signal?: AbortSignal;
  names?: { older: KeyOf; newer: KeyOf };
}

/** Merges two stored sides and hands the changes to `emit` in batches (awaited), in key order; the counts are diffSorted's. */
export async function diffStored(older: StoredSource, newer: StoredSource, options: StoredDiffOptions, emit: (changes: Change[]) => Promise<void>): Promise<DiffCounts> {
  const tally = new ChangeTally(options);
  const a = new StoredSide(older, options.signal);
  const b = new StoredSide(newer, options.signal);
  try {
    let hasA = await a.next();
    let hasB = await b.next();
    while (hasA && hasB) {
      const order = a.compareKey(b);
      if (order === 0) {
        if (a.sameLine(b)) tally.counts.unchanged++;
        else tally.matched(a.text(), b.text());
        hasA = a.advance() || (await a.next());
        hasB = b.advance() || (await b.next());
      } else if (order < 0) {
        tally.lost(a.text());
        hasA = a.advance() || (await a.next());
      } else {
        tally.gained(b.text());
        hasB = b.advance() || (await b.next());
      }
      if (tally.full) await tally.flush(emit);
    }
    for (; hasA; hasA = a.advance() || (await a.next())) {
      tally.lost(a.text());
      if (tally.full) await tally.flush(emit);
    }
    for (; hasB; hasB = b.advance() || (await b.next())) {
      tally.gained(b.text());
      if (tally.full) await tally.flush(emit);
    }
    await tally.flush(emit);
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
  return tally.settled();
}
