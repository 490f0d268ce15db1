import { diffMatched, matchSides, type DiffSource, type Matched, type MatchOptions } from './pair.js';
import type { Change, DiffCounts } from './merge-diff.js';

// sgq's diff as the rest of sgq sees it (the CLI, and the snapshot store's counts): two sides,
// exports or stored snapshots, matched on the identity they share and compared, the changes
// in key order. `diff` does both steps; `matchSides` and `diffMatched` are the two steps apart,
// for a caller that chooses another comparison once it knows the match (--confirm-lost's
// window, src/core/snapshots/confirm-lost.ts). What is behind it (reading sides as lines or
// bytes, the merge of sides stored in key order, the hash join of the others on two threads,
// the external sort) is this folder's own.

export { diffMatched, matchSides, type DiffSource, type Matched, type MatchOptions } from './pair.js';
export type { Change, ChangeKind, DiffCounts } from './merge-diff.js';
export type { Keyed, KeyStats } from '../records/keyed.js';
export type { LineBytes } from '../records/line-bytes.js';
export { keyReader, NotARecord, type KeyOf } from '../records/record-key.js';
export { LineTooLong } from '../records/lines.js';
export { snapshotRecords } from '../records/sources.js';
export { isCanonicalObject } from './canonical-line.js';
export { ID_FIELDS, NAME_FIELDS, fieldsOf } from '../records/identity.js';

export interface DiffOptions extends MatchOptions {
  /** Whether a record kept under the same identity but changed is a change (`--changed`). */
  changed: boolean;
  /** Stops the diff between batches, with its reason. */
  signal?: AbortSignal;
  /** Whether a hash join may take a worker thread (the second core). */
  thread?: boolean;
  /** Told of the match before the first change comes: its note to warn of, whether it is by id (renames). */
  onMatch?: (matched: Matched) => void;
  /** Each batch of changes, awaited: a slow reader slows the diff instead of filling memory. */
  emit?: (changes: Change[]) => Promise<void>;
}

/** The changes from `older` to `newer`: their counts, and the match (what each side's keying left out is in its `stats`). */
export async function diff(older: DiffSource, newer: DiffSource, options: DiffOptions): Promise<{ counts: DiffCounts; matched: Matched }> {
  const matched = await matchSides(older, newer, { key: options.key, tempDir: options.tempDir });
  options.onMatch?.(matched);
  const emit = options.emit ?? (async () => undefined);
  const counts = await diffMatched(matched, { changed: options.changed, signal: options.signal, thread: options.thread }, emit);
  return { counts, matched };
}
