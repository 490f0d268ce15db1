import { open } from 'node:fs/promises';
import { confirmationWindow, diffWindow, periodBefore, reachesWindow, listChange, comparable, diffSide, type WindowCounts, type AccountRoom, type UserChanges, type OpenSnapshot, type SnapshotStore, type SnapshotSubject, type StagedSnapshot, type StoredSnapshot } from '../../core/snapshots/snapshots.js';
import { diffMatched, matchSides, keyReader, snapshotRecords, type Change, type DiffCounts, type Matched, type LineBytes } from '../../core/diff/diff.js';
import type { JobEnd } from '../run/jobs.js';
import { count, grouped } from '../../core/words.js';
import { changeRecords, countsText } from './churn-text.js';

// The changes of one user's staged snapshot, against the one before it, or under
// --confirm-lost N against the N before it (core/snapshots/confirm-lost.ts): printed as records
// with --changes (and so sent to the dataset as churn events), listed for --notify, and
// counted in one line on stderr.

export interface ChangeOptions {
  /** --changes: print the changes as records. */
  print: boolean;
  /** Counted only (--confirm-lost without --changes or --notify): no line on stderr. */
  quiet?: boolean;
  /** --confirm-lost N (1: the plain diff of the last two snapshots). */
  confirmLost: number;
  /** --notify: the room for the accounts listed; the user's changes are returned. */
  room?: AccountRoom;
  key?: string;
  tempDir: string;
  /** This export's records in key order, with their bytes, when they fitted in memory: the file just written is not read back. */
  inOrder?: LineBytes;
  /** --full-every N: above 1, every change carries left_after and left_before (null unless lost). */
  fullEvery?: number;
}

/**
 * What a snapshot's changes came to: their counts (what its metadata keeps, counts.ts), and
 * the user's changes for a notification (when `room` was given); neither when there is no
 * snapshot to compare with. A first snapshot gives its records instead, for the one line the
 * run ends with (SnapshotCheckpoint.firstSnapshotsNote).
 */
export interface FoundChanges {
  counts?: Pick<WindowCounts, 'gained' | 'lost' | 'renamed' | 'unchanged'>;
  notice?: UserChanges;
  first?: number;
}

/** Finds the changes of a staged snapshot, prints them with --changes, lists them for --notify, and says their counts on stderr. */
export async function findChanges(store: SnapshotStore, subject: SnapshotSubject, staged: StagedSnapshot, end: JobEnd, options: ChangeOptions): Promise<FoundChanges> {
  const { reporter } = end;
  const { current, previous } = staged;
  if (!comparable(previous, current)) {
    if (!previous) return { first: current.meta.records };
    if (!options.quiet) reporter.info(`sgq: ${subject.user}: the previous snapshot, taken by sgq before 2.3, holds no records (it could not read records without \`username\`); this one has ${count(current.meta.records, 'record')}; changes are printed from the next one`);
    return {};
  }
  const matched = await matchSides(diffSide(previous, `the snapshot of ${previous.meta.taken_at}`), diffSide(current, 'this export', options.inOrder), options);
  if (matched.match.note) reporter.warn(`${subject.user}: ${matched.match.note}`);
  const renames = matched.match.by === 'id';
  const notice = options.room && emptyChanges(subject, current, previous);
  // Read only where it is needed (--confirm-lost, --full-every, a whole night after partial
  // ones): the stage read the folder already, and a user keeping many snapshots would parse
  // every metadata file again on each plain night.
  // Then only the newest snapshots, as many as the window and the last whole one need (a
  // year kept is not read every night).
  let read: StoredSnapshot[] | undefined;
  const history = () => (read ??= store.newest(subject, (tail) => reachesWindow(tail, Math.max(1, options.confirmLost))));
  const partial = current.meta.partial === true;
  // A whole night after partial ones: who left is judged over the period, to say when each was last held.
  const afterPartial = !partial && previous.meta.partial === true;
  const window = options.confirmLost > 1 || afterPartial ? mergeableWindow(history(), current, matched, options.confirmLost) : undefined;
  if (options.confirmLost > 1 && !window) reporter.warn(`${subject.user}: --confirm-lost: the snapshot before this one is kept in another order; this once, it is compared with that one alone and a loss is not confirmed`);
  const fields = { lastSeen: options.confirmLost > 1 && window !== undefined, window: (options.fullEvery ?? 1) > 1 ? { after: lastWhole(history(), previous).meta.taken_at, before: current.meta.taken_at } : undefined };
  const emit = async (batch: Change[]) => {
    const records = changeRecords(batch, renames, fields);
    if (notice) for (const record of records) listChange(notice, record.change as 'gained' | 'lost' | 'renamed', record, options.room!);
    if (options.print) await end.emit(records, true);
  };
  const counts = window ? await diffInWindow(window, previous, current, matched, { confirmLost: options.confirmLost, partial }, emit) : await diffMatched(matched, { changed: false }, emit);
  if (!options.quiet) reporter.info(countsLine(subject.user, counts, { renames, previous, partial, confirmLost: options.confirmLost, lostSince: afterPartial ? lastWhole(history(), previous) : undefined }));
  return { counts, notice };
}

/** The line a snapshot's changes end with on stderr. */
function countsLine(user: string, counts: DiffCounts | WindowCounts, how: { renames: boolean; previous: OpenSnapshot; partial: boolean; confirmLost: number; lostSince?: StoredSnapshot }): string {
  const since = how.previous.meta.taken_at;
  if (how.partial) {
    const renamed = counts.renamed > 0 ? `, ${grouped(counts.renamed)} renamed` : '';
    return `sgq: ${user}: ${grouped(counts.gained)} gained${renamed} since ${since}; who left is found by the next whole run (--full-every)`;
  }
  const incomplete = how.previous.meta.complete ? '' : ' (the previous snapshot was not complete: "lost" means "not seen")';
  const missing = 'missing' in counts && counts.missing > 0 ? `; ${grouped(counts.missing)} missing, lost if still missing after ${how.confirmLost} snapshots in a row (--confirm-lost)` : '';
  const lost = how.lostSince ? `; lost since the whole snapshot of ${how.lostSince.meta.taken_at}` : '';
  return `sgq: ${user}: ${countsText({ ...counts, changed: 0 }, { changed: false, renames: how.renames })} since ${since}${incomplete}${lost}${missing}`;
}

/** The last whole snapshot up to `previous` (`previous` itself without --full-every). */
const lastWhole = (history: readonly StoredSnapshot[], previous: StoredSnapshot): StoredSnapshot => history.findLast((s) => !s.meta.partial) ?? previous;

function emptyChanges(subject: SnapshotSubject, current: OpenSnapshot, previous: OpenSnapshot): UserChanges {
  const { user, route, how } = subject;
  return { user, route, how, taken_at: current.meta.taken_at, previous_taken_at: previous.meta.taken_at, counts: { gained: 0, lost: 0, renamed: 0 }, gained: [], lost: [], renamed: [], left_out: 0 };
}

/** The window of a snapshot: the ends of the periods it is judged against, and the snapshots of the oldest period before its end. */
interface Window {
  ends: StoredSnapshot[];
  within: StoredSnapshot[];
}

/**
 * The earlier snapshots of --confirm-lost's window that can be merged with this one: the ends
 * of the last N periods (each snapshot, without --full-every), down to the first kept in
 * another order than this one (a snapshot of sgq before 2.3, or of another --key), and the
 * snapshots of the oldest period before its end (when it lost an account, the first of them
 * that held it says since when). Undefined when not even the previous one can: the sides are
 * then compared as a plain diff, by a hash join.
 */
function mergeableWindow(history: readonly StoredSnapshot[], current: OpenSnapshot, matched: Matched, confirmLost: number): Window | undefined {
  const field = current.meta.sorted_by;
  if (matched.match.older !== field || matched.match.newer !== field) return undefined;
  const window = confirmationWindow(history, confirmLost);
  let from = window.length;
  while (from > 0 && window[from - 1]!.meta.sorted_by === field) from--;
  const ends = window.slice(from);
  if (ends.at(-1)?.meta.file !== history.at(-1)?.meta.file) return undefined;
  return { ends, within: periodBefore(history, ends[0]!).filter((s) => s.meta.sorted_by === field) };
}

/** The window's merge (confirm-lost.ts), its earlier snapshots opened here (the previous one is open already) and closed after. */
async function diffInWindow(window: Window, previous: OpenSnapshot, current: OpenSnapshot, matched: Matched, options: { confirmLost: number; partial: boolean }, emit: (batch: Change[]) => Promise<void>): Promise<WindowCounts> {
  const opened: OpenSnapshot[] = [];
  const openOf = async (s: StoredSnapshot): Promise<OpenSnapshot> => {
    if (s.meta.file === previous.meta.file) return previous;
    const o = { ...s, handle: await open(s.dataPath, 'r') };
    opened.push(o);
    return o;
  };
  try {
    const stats = { missingKey: 0, duplicates: 0 };
    const side = async (s: StoredSnapshot) => {
      const o = await openOf(s);
      return { records: snapshotRecords(o.handle, o.meta.sorted_by, stats, o.dataPath), takenAt: o.meta.taken_at };
    };
    const { names } = matched.match;
    const readers = names && { older: keyReader(names.older), newer: keyReader(names.newer) };
    const earlier = [];
    for (const s of window.ends) earlier.push(await side(s));
    const within = [];
    for (const s of window.within) within.push(await side(s));
    const records = snapshotRecords(current.handle, current.meta.sorted_by, stats, current.dataPath);
    return await diffWindow(earlier, records, { ...options, names: readers, within }, emit);
  } finally {
    await Promise.all(opened.map((s) => s.handle.close()));
  }
}
