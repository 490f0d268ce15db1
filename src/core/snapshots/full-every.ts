import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { replaceFile } from '../../fs/atomic.js';
import { readRegularFile } from '../../fs/read.js';
import { unreadable, type StoredSnapshot } from './store.js';
import { removeFile } from '../../fs/remove.js';

// `--full-every N`: a user's whole list is fetched on its runs 1, 1+N, 1+2N, … (counted in its
// snapshot store: the whole snapshots, and the partial ones since the last whole one), and on
// the runs between, only what came since its last run (`since`), kept as a partial snapshot:
// the snapshot before plus what came. A whole snapshot and the partial ones after it make a
// period; a period's last snapshot holds every account known in it. This file decides which
// night a run is, and what counts as a period; confirm-lost.ts judges changes over periods.

/** What a user's list is tonight: whole, or what came since its last run. */
export type NightPlan =
  | {
      whole: true;
      /** Why: its first snapshot, every N runs, --full, its last run cut short… */
      why: string;
      /** Pages its last whole snapshot took (what --dry-run expects tonight's to take); undefined for none. */
      pages?: number;
    }
  | {
      whole: false;
      why: string;
      /** The start of its last run: what came since then is asked for. */
      since: string;
      /** The last snapshot, which tonight's partial one is built on. */
      base: StoredSnapshot;
    };

export interface NightOptions {
  /** --full-every N (1: every run is whole). */
  fullEvery: number;
  /** --full: whole tonight, whatever the count says. */
  full: boolean;
  /** Why its last run kept nothing (wholeNextMark), if it was cut short. */
  cutShort?: string;
  /** --key, when given: a partial snapshot is keyed as its base is. */
  key?: string;
  /** The run's start (ISO 8601, UTC): what came since a later instant cannot be asked. */
  startedAt?: string;
}

/** Why a night is whole when the run asked for whole nights (the CLI names its flag instead). */
export const WHOLE_ASKED = 'a whole run was asked for';

/**
 * Whether the newest of a user's snapshots reach back to its last whole one: all of its
 * history that planNight reads (what store.newest() is asked for).
 */
export const reachesLastWhole = (tail: readonly { meta: { partial?: true } }[]): boolean => tail.length > 0 && !tail[0]!.meta.partial;

/** Whether a user's run tonight is whole, from its snapshots (oldest first: all, or the newest back to the last whole one). */
export function planNight(history: readonly StoredSnapshot[], options: NightOptions): NightPlan {
  const lastWhole = history.findLast((s) => !s.meta.partial);
  const pages = lastWhole?.meta.pages;
  if (options.fullEvery <= 1) return { whole: true, why: 'every run is whole', pages };
  if (history.length === 0) return { whole: true, why: 'its first snapshot' };
  if (options.full) return { whole: true, why: WHOLE_ASKED, pages };
  if (!lastWhole) return { whole: true, why: 'no whole snapshot of it is kept', pages };
  if (options.cutShort !== undefined) return { whole: true, why: `its last run kept nothing: ${options.cutShort}`, pages };
  // Tonight's place in the period: the whole run is 1.
  const run = history.length - history.lastIndexOf(lastWhole) + 1;
  if (run > options.fullEvery) return { whole: true, why: `every ${options.fullEvery} runs`, pages };
  const base = history.at(-1)!;
  const unfit = unfitBase(base, options);
  if (unfit) return { whole: true, why: unfit, pages };
  return { whole: false, why: `run ${run} of ${options.fullEvery}`, since: base.meta.taken_at, base };
}

/** Why the last snapshot cannot take what came since (a partial snapshot is keyed and sorted as it is); undefined when it can. */
function unfitBase(base: StoredSnapshot, { key, startedAt }: NightOptions): string | undefined {
  const { meta } = base;
  if (startedAt !== undefined && meta.taken_at > startedAt) return `its last snapshot says it was taken at ${meta.taken_at}, after this run's start: a clock was ahead`;
  if (!meta.complete || unreadable(meta)) return 'its last snapshot is not complete';
  if (meta.identity !== 'id' && meta.identity !== 'username' && meta.identity !== 'key') return 'its last snapshot has no account identity to add to';
  if (key !== undefined && meta.sorted_by !== key) return `its last snapshot is keyed by ${meta.sorted_by}, not by ${key}, the key asked for`;
  return undefined;
}

/**
 * The snapshots that end a period, oldest first: each whole snapshot not followed by a partial
 * one, and the last partial one of each period. The last snapshot always ends one (the period
 * in progress). A store without partial snapshots is all ends.
 */
export function periodEnds<T extends { meta: { partial?: true } }>(history: readonly T[]): T[] {
  return history.filter((_, i) => !history[i + 1]?.meta.partial);
}

/** The snapshots of the period `end` ends, before it, oldest first (none when it is a whole one). */
export function periodBefore<T extends { meta: { partial?: true } }>(history: readonly T[], end: T): T[] {
  let from = history.indexOf(end);
  if (from < 0) return [];
  while (from > 0 && history[from]!.meta.partial) from--;
  return history.slice(from, history.indexOf(end));
}

// A run cut short (--max-credits, a failure, a stop) keeps nothing for its user, and that
// user's next run is whole: a note in the user's folder says so, written when the run gives
// up the user and removed once a whole snapshot of it commits. It is a hint, not data: losing
// it to a crash costs nothing but a partial night.

const WHOLE_NEXT = '.whole-next.json';

/** Notes that the user's next run is whole (the caller holds its folder's lock). */
export function markWholeNext(folder: string, why: string, at: string): void {
  replaceFile(join(folder, WHOLE_NEXT), `${JSON.stringify({ why, at })}\n`, { durable: false });
}

/** Why the user's next run is whole, when a run cut short said so; undefined otherwise. */
export function wholeNextMark(folder: string): string | undefined {
  let text: string;
  try {
    text = readRegularFile(join(folder, WHOLE_NEXT), 'utf8');
  } catch (error) {
    // Anything but its absence (not a file, unreadable) errs on the side of a whole night.
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? undefined : `its note ${WHOLE_NEXT} cannot be read`;
  }
  try {
    const { why } = JSON.parse(text) as { why?: unknown };
    return typeof why === 'string' ? why : 'a run was cut short';
  } catch {
    return 'a run was cut short';
  }
}

/**
 * Forgets the note, once a whole snapshot of the user is kept. Looked for first: every whole
 * commit comes here, with or without --full-every, and an unlink of a file that is not there
 * costs Node an error object (21-28 µs against 4 for the look, a nightly job's every user).
 */
export function clearWholeNext(folder: string): void {
  const note = join(folder, WHOLE_NEXT);
  if (existsSync(note)) removeFile(note);
}
