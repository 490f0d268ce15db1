import { CallError } from '../../core/classify.js';
import { PageFailure, type FetchedPage, type PageRequest, type StopReason } from '../../core/paginate.js';

// `--full-every`'s nights between whole ones, as the runner sees them: a job asks its list
// with `since` (what came since the user's last run) instead of every page, and when the first
// answer shows the service did not honour `since` (an error record, or the list again), that
// user falls back to its whole list, that night: the answer is dropped and page 1 asked
// again without `since`.

/** What a job's list is tonight (Job.night): whole, or what came since. */
export type Night = WholeNight | SinceNight;

export interface WholeNight {
  whole: true;
  /** Why (said by --dry-run): its first snapshot, every N runs, --full, its last run cut short… */
  why: string;
  /** Pages its last whole snapshot took: what --dry-run expects tonight's to take; undefined for none. */
  pages?: number;
}

export interface SinceNight {
  whole: false;
  why: string;
  since: string;
  /** The job's request with `since`. */
  request: PageRequest;
  /** Why the first answer shows the service did not honour `since`; undefined when it did. */
  ignored(page: FetchedPage): Promise<string | undefined>;
  /** The job falls back to its whole list tonight: what it keeps is a whole snapshot. */
  fallBack(why: string): void;
  /** Why it fell back to the whole list, once it did. */
  readonly fellBack?: string;
}

/** The since a night's records came with: undefined for a whole night, or one that fell back to the whole list. */
export const sinceOfNight = (night: Night | undefined): string | undefined => (night && !night.whole && night.fellBack === undefined ? night.since : undefined);

/** What the runner does about a fallback: counts the dropped answer, says the line. */
export interface FallbackTold {
  /** The first answer, dropped: billed, but none of its records written. */
  dropped(page: FetchedPage): void;
  fellBack(why: string): void;
}

/**
 * The pages of a night asked with `since`: the first answer is checked before it is handed on;
 * one that shows `since` was not honoured (or an error record in its place) is dropped and the
 * whole list (`whole`, the job's own request) follows, from page 1.
 */
export async function* sinceNightPages(
  night: SinceNight,
  whole: PageRequest,
  fetch: (request: PageRequest) => AsyncGenerator<FetchedPage, StopReason>,
  told: FallbackTold,
): AsyncGenerator<FetchedPage, StopReason> {
  const first = fetch(night.request);
  let why: string | undefined;
  try {
    const step = await first.next();
    if (step.done) return step.value;
    why = await night.ignored(step.value);
    if (why === undefined) {
      yield step.value;
      return yield* first;
    }
    told.dropped(step.value);
  } catch (error) {
    const records = errorRecords(error);
    if (records === undefined) throw error;
    why = `the service answered the call with since by an error (${records.join('; ')})`;
  } finally {
    if (why !== undefined) await first.return('done');
  }
  night.fallBack(why);
  told.fellBack(why);
  return yield* fetch(whole);
}

/** The error records a failed first page answered with; undefined for any other failure. */
function errorRecords(error: unknown): readonly string[] | undefined {
  const failure = error instanceof PageFailure ? error.error : error;
  return failure instanceof CallError && failure.records.length > 0 ? failure.records : undefined;
}
