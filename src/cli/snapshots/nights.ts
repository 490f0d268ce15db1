import type { Env, ResolvedConfig } from '../../core/config.js';
import type { StateOwner } from '../../core/service.js';
import type { PageRequest, FetchedPage } from '../../core/paginate.js';
import { WHOLE_ASKED, planNight, reachesLastWhole, wholeNextMark, heldShare, SnapshotStore, type NightPlan, type SnapshotSubject, type StoredSnapshot } from '../../core/snapshots/snapshots.js';
import { snapshotRoot } from './open-store.js';
import type { SinceNight, WholeNight } from '../run/since-night.js';

// `--full-every N` for a run: which users' lists are whole tonight (core/snapshots/full-every.ts
// decides from each user's snapshots), and for the others the night asked with `since`, which
// checks that the service honoured it. A --snapshot run asks under the user's lock; --dry-run
// asks without one.

export interface FullEveryOptions {
  /** --full-every N, else the setting, else 1 (every run whole). */
  fullEvery: number;
  /** --full: every user whole tonight. */
  full: boolean;
  /** --key, when given. */
  key?: string;
  /** The run's start (ISO 8601): a last snapshot said to be taken after it was taken by a clock that was ahead. */
  startedAt: string;
}

/** --full-every's options of a run: the flags, else the full-every setting, else 1. */
export function fullEveryOptions(flags: { fullEvery?: number; full?: boolean; key?: string }, config: Pick<ResolvedConfig, 'fullEvery'>, startedAt: Date): FullEveryOptions {
  return { fullEvery: flags.fullEvery ?? Number(config.fullEvery ?? 1), full: flags.full === true, key: flags.key, startedAt: startedAt.toISOString() };
}

/** --dry-run's planner of a --snapshot run under --full-every (the store read, nothing locked); undefined without --full-every. */
export function dryRunNights(flags: { dir?: string; fullEvery?: number; full?: boolean; key?: string }, config: ResolvedConfig, env: Env, owner: StateOwner, startedAt: Date): NightPlanner | undefined {
  const options = fullEveryOptions(flags, config, startedAt);
  if (options.fullEvery <= 1) return undefined;
  return new NightPlanner(new SnapshotStore(snapshotRoot(flags.dir, config, env), { pid: process.pid, lock: noLock }, owner.service), options);
}

/** A dry run reads the store and takes no lock. */
const noLock = async () => ({ release: () => undefined });

/** Users' nights, from their snapshots in one store. */
export class NightPlanner {
  constructor(
    readonly store: SnapshotStore,
    readonly options: FullEveryOptions,
  ) {}

  /** Whether the user's list is whole tonight, and why. */
  plan(subject: SnapshotSubject): NightPlan {
    try {
      const folder = this.store.folder(subject);
      // The newest snapshots back to the last whole one: a year kept is not read every night.
      const plan = planNight(this.store.newest(subject, reachesLastWhole), { ...this.options, cutShort: wholeNextMark(folder) });
      return plan.whole && plan.why === WHOLE_ASKED ? { ...plan, why: '--full' } : plan;
    } catch (error) {
      // What cannot be read now fails the run where it is needed (the stage); tonight is whole.
      return { whole: true, why: `its snapshots cannot be read (${(error as Error).message})` };
    }
  }

  /** Tonight's night of the user, with its request (`withSince` builds the job's request with a since). */
  tonight(subject: SnapshotSubject, withSince: (since: string) => PageRequest): WholeNight | PartialNight {
    const plan = this.plan(subject);
    if (plan.whole) return { whole: true, why: plan.why, pages: plan.pages };
    return new PartialNight(plan.why, plan.since, plan.base, withSince(plan.since));
  }
}

/** A night asked with `since`: what came since `base` was taken, merged onto it unless the service did not honour since. */
export class PartialNight implements SinceNight {
  readonly whole = false;
  /** Why it fell back to the whole list, once it did. */
  fellBack?: string;

  constructor(
    readonly why: string,
    readonly since: string,
    readonly base: StoredSnapshot,
    readonly request: PageRequest,
  ) {}

  async ignored(page: FetchedPage): Promise<string | undefined> {
    if (page.errors.length > 0) return `the service answered the call with since by an error (${page.errors.join('; ')})`;
    const { records } = page;
    if (records.length === 0) return undefined;
    const { held, unkeyed } = await heldShare(this.base, records);
    const field = this.base.meta.sorted_by;
    if (unkeyed > 0) return `what came since has records without ${field}, which its snapshots are keyed by`;
    if (held * 2 > records.length) return `the service did not honour since (${held} of the ${records.length} records of its first answer are in the last snapshot)`;
    return undefined;
  }

  fallBack(why: string): void {
    this.fellBack = why;
  }

  /** Still a night of what came since: it did not fall back. */
  get partial(): boolean {
    return this.fellBack === undefined;
  }
}
