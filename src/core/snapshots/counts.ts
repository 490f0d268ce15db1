import { diff, type Change, type DiffCounts, type DiffSource, type LineBytes } from '../diff/diff.js';
import { unreadable, type OpenSnapshot, type SnapshotCounts, type StoredSnapshot } from './store.js';

// What a snapshot counts: how many accounts came and went since the snapshot before it. Kept
// in the snapshot's metadata when it commits (snapshot-jobs.ts), or counted once afterwards for
// snapshots of an older sgq (SnapshotStore.countHistory), so that `sgq history` reads numbers
// instead of diffing a year of snapshots each time.

/** Whether `current` can be compared with the snapshot before it: there is one, and it is not an empty snapshot of sgq before 2.3. */
export const comparable = (previous: StoredSnapshot | undefined, current: StoredSnapshot): previous is StoredSnapshot =>
  previous !== undefined && !(unreadable(previous.meta) && current.meta.records > 0);

/**
 * The changes a snapshot's metadata keeps, given its diff: against the snapshot before it, or
 * under `--confirm-lost N` against its window (confirm-lost.ts decides that rule, and a run
 * with it counts by it whether or not it prints changes: snapshot-jobs.ts). Snapshots of an
 * older sgq, counted afterwards, count their plain diff.
 */
export function countedChanges(diff: Pick<DiffCounts, 'gained' | 'lost' | 'renamed'>): Pick<DiffCounts, 'gained' | 'lost' | 'renamed'> {
  return { gained: diff.gained, lost: diff.lost, renamed: diff.renamed };
}

/** A snapshot's counts as its metadata keeps them: nulls where there is no snapshot before it, or it could not be compared. */
export function countsOf(previous: StoredSnapshot | undefined, current: StoredSnapshot, diff: Pick<DiffCounts, 'gained' | 'lost' | 'renamed'> | undefined): SnapshotCounts {
  if (previous === undefined) return { previous: null, gained: null, lost: null, renamed: null };
  if (!diff) return { previous: previous.meta.file, gained: null, lost: null, renamed: null };
  return { previous: previous.meta.file, ...countedChanges(diff) };
}

export interface CountOptions {
  /** Where a diff of sides not in key order spills (the subject's folder). */
  tempDir: string;
  signal?: AbortSignal;
  /** Each batch of changes, for a caller that lists them (the history page); none: counted only. */
  emit?: (changes: Change[]) => Promise<void>;
  /** `current`'s records in key order, when they are held in memory (just staged): its file is not read back. */
  inOrder?: LineBytes;
}

/** The field --key named when `snapshot` was taken (its identity is that key), else undefined: ids, else usernames. */
export const keyOf = (snapshot: StoredSnapshot): string | undefined => (snapshot.meta.identity === 'key' ? snapshot.meta.sorted_by : undefined);

/**
 * An open snapshot as a side of a diff, named `where` in what the diff says, in order of the
 * field it is sorted by; `inOrder`: its records held in memory (just staged), read instead of its file.
 */
export const diffSide = (snapshot: OpenSnapshot, where: string, inOrder?: LineBytes): DiffSource => ({ kind: 'snapshot', handle: snapshot.handle, sortedBy: snapshot.meta.sorted_by, path: snapshot.dataPath, where, inOrder });

/** Diffs two open snapshots as `sgq diff` would (matched by id, else username, or the --key they were taken with). */
export async function diffSnapshots(previous: OpenSnapshot, current: OpenSnapshot, options: CountOptions): Promise<DiffCounts> {
  const older = diffSide(previous, `the snapshot of ${previous.meta.taken_at}`);
  const newer = diffSide(current, `the snapshot of ${current.meta.taken_at}`, options.inOrder);
  return (await diff(older, newer, { key: keyOf(current), tempDir: options.tempDir, changed: false, signal: options.signal, emit: options.emit })).counts;
}

/** The counts of `current` against the snapshot before it (both open): nulls where there is none to compare with. */
export async function countSnapshot(previous: OpenSnapshot | undefined, current: OpenSnapshot, options: CountOptions): Promise<SnapshotCounts> {
  if (!comparable(previous, current)) return countsOf(previous, current, undefined);
  return countsOf(previous, current, await diffSnapshots(previous, current, options));
}
