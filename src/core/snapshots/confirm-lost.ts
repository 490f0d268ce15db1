import { Cursor, type Keyed } from '../records/keyed.js';
import type { Change } from '../diff/diff.js';
import type { KeyOf } from '../records/record-key.js';
import { periodEnds, reachesLastWhole } from './full-every.js';
import { unreadable, type SnapshotMeta } from './store.js';

// `--confirm-lost N`: an account is lost only once it is missing from N complete snapshots in
// a row, and it is reported in the snapshot that confirms it; one that comes back before that
// was never lost (a flicker of the service's lists) and is never reported. Put another way, an
// account is a follower at a snapshot when one of the last N snapshots holds it: a gain is an
// account that becomes one, a loss one that stops being one. With N = 1 that is the plain diff
// of the last two snapshots. The rule is decided here once, for `--changes`, the dataset's
// churn events, notifications and `sgq history`. Under `--full-every` (full-every.ts) the
// snapshots are periods (a whole snapshot and the partial ones after it, ended by the last,
// which holds every account known in it): a loss is confirmed by whole runs only, and a
// partial snapshot reports none.

/** What an account is at a snapshot under the rule: gained, lost, or neither. */
export type ConfirmedChange = 'gained' | 'lost' | undefined;

/**
 * The one decision of `--confirm-lost N`: whether an account counts as gained or lost at a
 * snapshot, from where it was present in that subject's complete snapshots up to it (`present`,
 * oldest first, the snapshot decided last). Only the last N + 1 entries matter; snapshots
 * before the first one count as not holding it. A loss therefore counts in the snapshot that
 * makes N absences in a row (not in the one where the account went missing), and a gain in the
 * first snapshot that holds an account no earlier one of the N before it held.
 */
export function confirmedChange(present: readonly boolean[], confirmLost: number): ConfirmedChange {
  const seen = (back: number) => present[present.length - 1 - back] === true;
  let before = false;
  let now = false;
  for (let back = 0; back < confirmLost; back++) now ||= seen(back);
  for (let back = 1; back <= confirmLost; back++) before ||= seen(back);
  return now && !before ? 'gained' : before && !now ? 'lost' : undefined;
}

/**
 * The earlier snapshots a snapshot is judged against under `--confirm-lost N`: the ends of
 * the last N periods before it (each snapshot, without `--full-every`), complete ones, oldest
 * first (a snapshot of sgq before 2.3 that could not read its records is no evidence of
 * absence, and is left out like an incomplete one).
 */
export function confirmationWindow<T extends { meta: SnapshotMeta }>(earlier: readonly T[], confirmLost: number): T[] {
  return periodEnds(earlier).filter((s) => s.meta.complete && !unreadable(s.meta)).slice(-confirmLost);
}

/**
 * Whether the newest of a user's snapshots hold what the window of `--confirm-lost N` reads of
 * its whole history: N complete period ends, and the whole snapshot that opens the oldest
 * one's period (periodBefore walks back to it), so also the last whole one (what
 * store.newest() is asked for).
 */
export function reachesWindow<T extends { meta: SnapshotMeta }>(tail: readonly T[], confirmLost: number): boolean {
  return reachesLastWhole(tail) && confirmationWindow(tail, confirmLost).length >= confirmLost;
}

/** One earlier snapshot of the window, read in key order. */
export interface WindowSide {
  records: AsyncIterable<Keyed[]>;
  /** When it was taken: a lost account's `last_seen`. */
  takenAt: string;
}

export interface WindowCounts {
  gained: number;
  lost: number;
  renamed: number;
  unchanged: number;
  /** Followers by the rule that this snapshot does not hold: lost if still missing when N snapshots have passed. */
  missing: number;
}

const BATCH = 1000;

export interface WindowOptions {
  confirmLost: number;
  names?: { older: KeyOf; newer: KeyOf };
  signal?: AbortSignal;
  /**
   * The snapshots of the oldest period before its end (`--full-every`), oldest first: a lost
   * account's `lastSeen` is the first of them (or that end) that holds it, the last whole
   * snapshot that held it or the night it came after that one.
   */
  within?: readonly WindowSide[];
  /** The current snapshot is partial: what came since only, so nobody is lost by it. */
  partial?: boolean;
}

/**
 * The changes of `current` under `--confirm-lost N`, judged against the earlier snapshots of
 * its window (oldest first, at most N, all in order of the same key as `current`): one merge
 * of them all, in constant memory, the changes handed to `emit` in batches in key order. A
 * lost account's record is its last one seen, with `lastSeen` the time of the snapshot that
 * last held it (the first of its period, under `--full-every`: see `within`); a rename is
 * against the last record seen of the same id.
 */
export async function diffWindow(earlier: readonly WindowSide[], current: AsyncIterable<Keyed[]>, options: WindowOptions, emit: (changes: Change[]) => Promise<void>): Promise<WindowCounts> {
  const within = options.within ?? [];
  const before = [...within, ...earlier];
  const cursors = [...before.map((s) => s.records), current].map((records) => new Cursor(records[Symbol.asyncIterator](), options.signal));
  const live = await Promise.all(cursors.map((c) => c.next()));
  const counts: WindowCounts = { gained: 0, lost: 0, renamed: 0, unchanged: 0, missing: 0 };
  // The sides the rule judges are the window's ends and the current snapshot, the newest.
  const newest = earlier.length;
  const out: Change[] = [];
  const push = async (change: Change) => {
    out.push(change);
    if (out.length >= BATCH) await emit(out.splice(0));
  };
  try {
    for (;;) {
      const key = smallestKey(cursors, live);
      if (key === undefined) break;
      const held = cursors.map((c, i) => live[i]! && c.current.key === key);
      const lines = cursors.map((c, i) => (held[i] ? c.current.line : undefined)).slice(within.length);
      for (let i = 0; i < cursors.length; i++) if (held[i]) live[i] = cursors[i]!.advance() || (await cursors[i]!.next());
      const present = held.slice(within.length);
      const last = present.lastIndexOf(true, newest - 1);
      const verdict = judge(present, lines, last, options);
      // A partial snapshot knows only what came: an account it does not hold is not lost by it.
      const change = verdict?.change === 'lost' && options.partial ? undefined : verdict;
      if (change) {
        counts[change.change as 'gained' | 'lost' | 'renamed']++;
        await push(change.change === 'lost' ? { ...change, lastSeen: before[held.indexOf(true)]!.takenAt } : change);
      } else if (present[newest]) counts.unchanged++;
      else if (!options.partial && present.slice(-options.confirmLost).some(Boolean)) counts.missing++;
    }
    if (out.length) await emit(out);
  } finally {
    await Promise.all(cursors.map((c) => c.close()));
  }
  return counts;
}

/** The change one account makes at the newest snapshot, from where it was present and its lines there; `last` is the last earlier side holding it. */
function judge(present: boolean[], lines: (string | undefined)[], last: number, options: { confirmLost: number; names?: { older: KeyOf; newer: KeyOf } }): Change | undefined {
  const newest = present.length - 1;
  const verdict = confirmedChange(present, options.confirmLost);
  if (verdict === 'gained') return { change: 'gained', line: lines[newest]! };
  if (verdict === 'lost') return { change: 'lost', line: lines[last]! };
  if (!present[newest] || last < 0 || !options.names) return undefined;
  const before = options.names.older(lines[last]!);
  const after = options.names.newer(lines[newest]!);
  return before !== undefined && after !== undefined && before !== after ? { change: 'renamed', line: lines[newest]!, from: before } : undefined;
}

/** The smallest current key among the sides still reading; undefined when all are done. */
function smallestKey(sides: readonly Cursor<Keyed>[], live: readonly boolean[]): string | undefined {
  let key: string | undefined;
  for (let i = 0; i < sides.length; i++) {
    if (!live[i]) continue;
    const k = sides[i]!.current.key;
    if (key === undefined || k < key) key = k;
  }
  return key;
}
