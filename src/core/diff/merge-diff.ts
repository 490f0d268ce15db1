import { Cursor, type Keyed } from '../records/keyed.js';
import type { KeyOf } from '../records/record-key.js';

// The diff of two exports sorted by key: one pass over both, in constant memory.

export type ChangeKind = 'gained' | 'lost' | 'renamed' | 'changed';

export interface Change {
  change: ChangeKind;
  /** The record line: the newer one for gained, renamed and changed, the older one for lost. */
  line: string;
  /** For renamed: the username the older record had. */
  from?: string;
  /** For lost under --confirm-lost (snapshots/confirm-lost.ts): when the snapshot that last held it was taken. */
  lastSeen?: string;
}

export interface DiffCounts {
  gained: number;
  lost: number;
  /** Same id, another username: counted and reported when matching by id (`names`). */
  renamed: number;
  /** Same key, other fields different; counted always, reported only when asked. */
  changed: number;
  unchanged: number;
}

const BATCH = 1000;

/**
 * Merges two key-ordered streams and hands the changes to `emit` in batches (awaited, so
 * a slow reader slows the diff instead of filling memory).
 */
export async function diffSorted(
  older: AsyncIterable<Keyed[]>,
  newer: AsyncIterable<Keyed[]>,
  /** `signal` stops the merge between batches, with its reason. */
  options: { changed: boolean; signal?: AbortSignal; names?: { older: KeyOf; newer: KeyOf } },
  emit: (changes: Change[]) => Promise<void>,
): Promise<DiffCounts> {
  const counts = emptyCounts();
  const { names } = options;
  const a = new Cursor(older[Symbol.asyncIterator](), options.signal);
  const b = new Cursor(newer[Symbol.asyncIterator](), options.signal);
  let out: Change[] = [];
  const push = async (change: ChangeKind, line: string, from?: string) => {
    out.push(from === undefined ? { change, line } : { change, line, from });
    if (out.length >= BATCH) {
      const batch = out;
      out = [];
      await emit(batch);
    }
  };
  try {
    let hasA = await a.next();
    let hasB = await b.next();
    while (hasA && hasB) {
      const ka = a.current.key;
      const kb = b.current.key;
      if (ka === kb) {
        let from: string | undefined;
        if (a.current.line === b.current.line) counts.unchanged++;
        // Only records that differ are read for their names: an unchanged one costs nothing more.
        else if (names && (from = renamedFrom(names, a.current.line, b.current.line)) !== undefined) {
          counts.renamed++;
          await push('renamed', b.current.line, from);
        } else {
          counts.changed++;
          if (options.changed) await push('changed', b.current.line);
        }
        hasA = a.advance() || (await a.next());
        hasB = b.advance() || (await b.next());
      } else if (ka < kb) {
        counts.lost++;
        await push('lost', a.current.line);
        hasA = a.advance() || (await a.next());
      } else {
        counts.gained++;
        await push('gained', b.current.line);
        hasB = b.advance() || (await b.next());
      }
    }
    for (; hasA; hasA = a.advance() || (await a.next())) {
      counts.lost++;
      await push('lost', a.current.line);
    }
    for (; hasB; hasB = b.advance() || (await b.next())) {
      counts.gained++;
      await push('gained', b.current.line);
    }
    if (out.length) await emit(out);
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
  return settled(counts, options.changed);
}

export const emptyCounts = (): DiffCounts => ({ gained: 0, lost: 0, renamed: 0, changed: 0, unchanged: 0 });

/** Adds one thread's counts to another's. */
export function addCounts(into: DiffCounts, from: DiffCounts): void {
  for (const k of Object.keys(into) as (keyof DiffCounts)[]) into[k] += from[k];
}

/** The counts as told: without --changed, a changed record counts as unchanged. */
export function settled(counts: DiffCounts, changed: boolean): DiffCounts {
  if (!changed) {
    counts.unchanged += counts.changed;
    counts.changed = 0;
  }
  return counts;
}

/** The older username when the two records of one id carry different ones; both must have one. */
export function renamedFrom(names: { older: KeyOf; newer: KeyOf }, older: string, newer: string): string | undefined {
  const before = names.older(older);
  const after = names.newer(newer);
  return before !== undefined && after !== undefined && before !== after ? before : undefined;
}
