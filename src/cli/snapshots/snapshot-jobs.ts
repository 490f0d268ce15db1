import { ExitCode, SgqError, usageError } from '../../core/errors.js';
import { validateSetting } from '../../core/config.js';
export { openSnapshotStore } from './open-store.js';
import { RunMemory, SnapshotCapture, countSnapshot, countsOf, clearWholeNext, markWholeNext, stagePartial, type UserChanges, type SnapshotCounts, type SnapshotStore, type SnapshotSubject, type StagedSnapshot } from '../../core/snapshots/snapshots.js';
import { STREAMING_COMMIT_MS, type Checkpoint } from '../run/checkpoint.js';
import type { Job, JobEnd } from '../run/jobs.js';
import { leftOutText } from './churn-text.js';
import type { RunNotifier } from './notifier.js';
import { findChanges } from './user-changes.js';
import { count } from '../../core/words.js';
import type { PageRequest } from '../../core/paginate.js';
import { NightPlanner, PartialNight, type FullEveryOptions } from './nights.js';
import type { WholeNight } from '../run/since-night.js';

import { accessSync, constants } from 'node:fs';
import { makePrivateFolder } from '../../fs/modes.js';
import { fileError, isSystemError } from '../../fs/file-errors.js';

export interface SnapshotFlags {
  snapshot?: boolean;
  changes?: boolean;
  snapshotDir?: string;
  all?: boolean;
  since?: string;
  sinceLast?: boolean;
  raw?: boolean;
  key?: string;
  /** --notify URL (checked as the setting is). */
  notify?: string;
  /** --confirm-lost N. */
  confirmLost?: number;
  /** --full-every N. */
  fullEvery?: number;
  /** --full. */
  full?: boolean;
}

/** A snapshot is a whole list: the flags that would make it anything else are refused up front. */
export function checkSnapshotFlags(flags: SnapshotFlags): void {
  if (flags.changes && !flags.snapshot) throw usageError('--changes needs --snapshot', 'the changes are those against the previous snapshot');
  if (flags.snapshotDir !== undefined && !flags.snapshot) throw usageError('--snapshot-dir needs --snapshot');
  if (flags.key !== undefined && !flags.snapshot) throw usageError('--key needs --snapshot', 'it names the field that identifies an account in a snapshot');
  if (flags.notify !== undefined && !flags.snapshot) throw usageError('--notify needs --snapshot', 'it posts the changes a snapshot shows against the previous one');
  if (flags.notify !== undefined) flags.notify = validateSetting('notify', flags.notify);
  if (flags.confirmLost !== undefined && !flags.snapshot) throw usageError('--confirm-lost needs --snapshot', 'it counts the snapshots an account is missing from');
  if (flags.fullEvery !== undefined && !flags.snapshot) throw usageError('--full-every needs --snapshot', 'it counts the snapshots of each user');
  if (flags.full && !flags.snapshot) throw usageError('--full needs --snapshot', 'it makes the snapshots of --full-every whole tonight');
  if (!flags.snapshot) return;
  if (!flags.all) throw usageError('--snapshot needs --all', 'a snapshot is the whole list');
  if (flags.since !== undefined || flags.sinceLast) throw usageError('--snapshot cannot be used with --since or --since-last', 'a snapshot is the whole list');
  if (flags.raw) throw usageError('--snapshot cannot be used with --raw');
}

/** Users whose snapshots are committed at once: libuv's four threads flush their files meanwhile. */
const COMMITS_AT_ONCE = 4;

/** One user's staged snapshot, and the lock on its folder held until it is committed or dropped. */
interface Held {
  user: string;
  subject: SnapshotSubject;
  lock: { release(): void };
  staged?: StagedSnapshot;
  /** Its changes, for --notify: kept in the outbox before the snapshot commits. */
  changes?: UserChanges;
  /** --changes or --notify: the records of a first snapshot, said once it is kept (firstSnapshotsNote). */
  first?: number;
  /** What follows its commit: a whole snapshot ends the note of a run cut short (--full-every). */
  committed?: () => void;
}

/** What a run does with the changes beside --changes: --confirm-lost, --notify's notifier, --full-every. */
export interface ChurnOptions {
  confirmLost: number;
  notifier?: RunNotifier;
  /** --full-every N above 1 (and --full): the nights between whole ones ask what came since. */
  fullEvery?: FullEveryOptions;
  /** Told when a user's sort first spills to disk: the run holds large accounts (scope.ts keeps V8's heap tighter then). */
  onSpill?: () => void;
}

/** What a user's end needs beside the job's end. */
interface UserEnd {
  capture: SnapshotCapture;
  /** The store failed while the export was collected. */
  failed: unknown;
  changes: boolean;
  key?: string;
  takenAt: Date;
  /** Tonight's since, on a partial night that did not fall back. */
  since?: PartialNight;
}

/**
 * The snapshots of a run, as a checkpoint: each user's folder is locked before its first
 * request and stays locked through read, compare and commit; a complete export is staged
 * (written, flushed, diffed against the previous one) and becomes a snapshot only when the
 * scope commits, once the output holding its records or its changes is durable.
 */
export class SnapshotCheckpoint implements Checkpoint {
  private readonly held = new Map<string, Held>();
  /** The held users whose snapshot is staged: what a commit or a drop goes through. */
  private readonly staged = new Set<Held>();
  private nextCommit = Date.now() + STREAMING_COMMIT_MS;
  /** The first snapshots kept (with --changes), with their records: one line says them all at the end. */
  private readonly firsts: { user: string; records: number }[] = [];
  /** Why a commit of the run failed (this store's, or the dataset's before it): nothing is kept from then on. */
  private commitFailure?: unknown;
  /** Users whose staged snapshot a failed commit dropped, for the resume (takeLost). */
  private readonly lost: string[] = [];
  /** The memory the users in flight share for their exports and sorts: one budget for the run, whatever --concurrency. */
  private readonly memory: RunMemory;

  /** --full-every: which users are whole tonight. */
  readonly planner?: NightPlanner;

  private constructor(
    readonly store: SnapshotStore,
    private readonly churn: ChurnOptions,
  ) {
    if (churn.fullEvery && churn.fullEvery.fullEvery > 1) this.planner = new NightPlanner(store, churn.fullEvery);
    this.memory = new RunMemory(undefined, churn.onSpill);
  }

  /** Checks the store can be written before anything is fetched. */
  static open(store: SnapshotStore, churn: ChurnOptions = { confirmLost: 1 }): SnapshotCheckpoint {
    try {
      makePrivateFolder(store.root);
      accessSync(store.root, constants.W_OK);
    } catch (error) {
      throw storeError(store.root, error);
    }
    return new SnapshotCheckpoint(store, churn);
  }

  get what(): string {
    return `the snapshots in ${this.store.root}`;
  }

  get pending(): boolean {
    return this.staged.size > 0;
  }

  /** While output streams, at most once a second (checkpoint.ts); a user's folder stays locked until then. */
  get due(): boolean {
    return this.pending && Date.now() >= this.nextCommit;
  }

  commit(): Promise<void> {
    return this.cut()();
  }

  /** The snapshots staged now; one staged after this instant waits for the next commit, once the output covering it is durable. */
  cut(): () => Promise<void> {
    const cut = [...this.staged];
    this.staged.clear();
    return () => this.commitCut(cut);
  }

  /**
   * Commits the users of a cut, a few at once: each commit waits on two flushes (its metadata
   * and its folder), and a run with --out commits every user at its end. The first that fails
   * ends it: no other starts, and those not committed are dropped with the rest.
   */
  private async commitCut(cut: readonly Held[]): Promise<void> {
    // Dropped since the cut (a commit before it failed): nothing of it is kept.
    const waiting = cut.filter((held) => this.held.get(held.user) === held);
    // The notification first: a snapshot kept is never without the notification of its changes.
    // If it cannot be kept, nothing of the cut is: Checkpoints tells failedCommit, and drop lists the users.
    await this.churn.notifier?.keep(waiting.flatMap((held) => (held.changes ? [held.changes] : [])));
    let failed: { held: Held; error: unknown } | undefined;
    const lane = async () => {
      for (let held; !failed && (held = waiting.shift()); ) {
        try {
          await held.staged!.commit();
        } catch (error) {
          failed ??= { held, error };
          return;
        }
        held.committed?.();
        if (held.first !== undefined) this.firsts.push({ user: held.user, records: held.first });
        await this.release(held);
      }
    };
    await Promise.all(Array.from({ length: COMMITS_AT_ONCE }, lane));
    if (failed) {
      const { held, error } = failed;
      // The file system's own error, for the lines of the users in flight (failedCommit keeps it).
      this.commitFailure = error;
      // This one and those of the cut not committed are dropped with everything staged (Checkpoints): the resume takes them.
      this.lost.push(...cut.filter((h) => this.held.get(h.user) === h).map((h) => h.user));
      throw fileError(error, { what: `cannot store the snapshot of ${held.user} in ${this.store.root}`, exitCode: ExitCode.internal, then: 'the records were written; the next run compares against the snapshot before' });
    }
    this.nextCommit = Date.now() + STREAMING_COMMIT_MS;
  }

  async drop(): Promise<void> {
    for (const held of this.held.values()) {
      if (held.staged && this.commitFailure !== undefined && !this.lost.includes(held.user)) this.lost.push(held.user);
      await held.staged?.drop();
      await this.release(held);
    }
  }

  failedCommit(error: unknown): void {
    this.commitFailure ??= error;
  }

  takeLost(): string[] {
    return this.lost.splice(0);
  }

  async close(): Promise<void> {
    await this.drop();
    this.churn.notifier?.close();
  }

  /** After the run's output and commits: --notify's posts (notifier.ts); never throws. */
  async afterRun(): Promise<void> {
    await this.churn.notifier?.deliver();
  }

  /**
   * What a run with --changes says of the first snapshots it kept, which have no changes to
   * print: a user alone gets its own line, a batch one line for all (a first night over 40
   * users is one line of a cron mail, not 40). Undefined when there were none.
   */
  firstSnapshotsNote(): string | undefined {
    const [only, ...others] = this.firsts;
    if (!only) return undefined;
    if (others.length === 0) return `sgq: ${only.user}: first snapshot (${count(only.records, 'record')}); changes are printed from the next one`;
    return `sgq: ${count(this.firsts.length, 'first snapshot')}; changes are printed from the next run`;
  }

  /**
   * The hooks that keep one user's export as a snapshot, and with --changes print what changed
   * instead. Under --full-every, `withSince` builds the user's request with a since: a night
   * between whole ones keeps what came since, merged onto the last snapshot (a partial one).
   */
  hooks(subject: SnapshotSubject, takenAt: Date, changes: boolean, key?: string, withSince?: (since: string) => PageRequest): Pick<Job, 'onStart' | 'onRecords' | 'hideRecords' | 'onEnd' | 'night'> {
    let capture: SnapshotCapture | undefined;
    let tonight: WholeNight | PartialNight | undefined;
    /** Tonight's since, unless the night is whole or fell back to the whole list. */
    const partial = () => (tonight instanceof PartialNight && tonight.partial ? tonight : undefined);
    // A partial night's records are keyed as the snapshot they are merged onto.
    const start = () => (capture ??= new SnapshotCapture(this.store, subject, partial()?.base.meta.sorted_by ?? key, this.memory));
    /** The store failed while the export was collected (a full disk under a spill): the records still go out, the snapshot is not kept. */
    let failed: unknown;
    const { planner } = this;
    return {
      hideRecords: changes,
      onStart: async () => {
        this.held.set(subject.user, { user: subject.user, subject, lock: await this.lockSubject(subject) });
      },
      night: planner && withSince && (() => (tonight = planner.tonight(subject, withSince))),
      onRecords: async (records, lossless) => {
        if (failed !== undefined) return;
        try {
          await start().add(records, lossless);
        } catch (error) {
          if (!isSystemError(error)) throw error;
          failed = error;
        }
      },
      onEnd: (end) => this.endUser(subject, end, { capture: start(), failed, changes, key, takenAt, since: partial() }),
    };
  }

  /** A user's end: its export staged as a snapshot (and its changes found), or, cut short, nothing kept. */
  private async endUser(subject: SnapshotSubject, end: JobEnd, user: UserEnd): Promise<void> {
    const held = this.held.get(subject.user);
    const { capture, failed, changes } = user;
    const notKept = (error: unknown) => this.notKept(error, changes);
    if (end.cutShort || !held || failed !== undefined) {
      capture.discard();
      if (held) {
        // Under --full-every, the user's next run is whole.
        if (this.planner) this.noteWholeNext(subject, end.cutShort ?? 'its snapshot could not be stored', user.takenAt, end);
        await this.release(held);
      }
      if (failed !== undefined && !end.cutShort) throw notKept(failed);
      // Its lock went with everything a failed commit dropped: nothing is kept from then on.
      if (!held && this.commitFailure !== undefined && !end.cutShort) throw notKept(this.commitFailure);
      end.reporter.warn(`${subject.user}: not stored as a snapshot: ${end.cutShort ?? 'its folder was not locked'}; only a complete export is kept`);
      return;
    }
    const staged = await this.stage(capture, held, { taken_at: user.takenAt.toISOString(), complete: true, credits_used: end.credits }, user.since, notKept);
    await this.findStaged(subject, staged, held, end, user);
  }

  /** Finds (and prints, with --changes) a staged snapshot's changes, keeps its counts, and hands it to the next commit. */
  private async findStaged(subject: SnapshotSubject, staged: StagedSnapshot, held: Held, end: JobEnd, { capture, changes, key }: UserEnd): Promise<void> {
    try {
      const note = leftOutText(capture.stats, capture.sortedBy, `${subject.user}: snapshot`);
      if (note) end.reporter.warn(note);
      const { confirmLost, notifier } = this.churn;
      const options = { key, tempDir: this.store.folder(subject), inOrder: capture.inOrder, fullEvery: this.planner?.options.fullEvery };
      // Kept in its metadata when it commits: `sgq history` reads them instead of diffing every night again.
      if (changes || notifier) {
        const found = await findChanges(this.store, subject, staged, end, { ...options, print: changes, confirmLost, room: notifier?.room });
        held.changes = found.notice;
        held.first = found.first;
        staged.current.meta.counts = countsOf(staged.previous, staged.current, found.counts);
      } else {
        // --confirm-lost alone still counts by its rule: `sgq history` must not mix confirmed and plain counts.
        const counted = () =>
          confirmLost > 1
            ? findChanges(this.store, subject, staged, end, { ...options, print: false, quiet: true, confirmLost }).then((found) => countsOf(staged.previous, staged.current, found.counts))
            : countSnapshot(staged.previous, staged.current, options);
        staged.current.meta.counts = await countQuietly(staged, end, counted);
      }
    } catch (error) {
      await staged.drop();
      await staged.close().catch(() => undefined);
      await this.release(held);
      throw isSystemError(error) ? this.notKept(error, changes) : error;
    } finally {
      capture.release();
    }
    // Its files were needed for the diff only: a run of many users must not hold two open
    // files per user until the output is kept (the commit works by name).
    await staged.close();
    // A commit that failed while this diff ran dropped everything held, this user's lock
    // too: nothing of it is kept, and its end says so (the runner lists it for the resume).
    if (this.held.get(held.user) !== held) {
      await staged.drop();
      if (this.commitFailure !== undefined) throw this.notKept(this.commitFailure, changes);
      return;
    }
    // Pending (so committed by the scope) only once its changes are written: another
    // user's end commits what is staged, and must not take a snapshot whose diff is running.
    held.staged = staged;
    if (!staged.current.meta.partial) held.committed = () => forgetWholeNext(this.store.folder(subject));
    this.staged.add(held);
  }

  /** Notes that the user's next run is whole (--full-every): a hint, so a failure to write it is only traced. */
  private noteWholeNext(subject: SnapshotSubject, why: string, takenAt: Date, { reporter }: JobEnd): void {
    try {
      markWholeNext(this.store.folder(subject), why, takenAt.toISOString());
    } catch (error) {
      // The next run is then counted as usual: what came since its last kept snapshot, nothing lost.
      reporter.trace(`${subject.user}: the note that its next run is whole was not written: ${(error as Error).message}`);
    }
  }

  /**
   * Stages a complete export, or on a partial night what came since merged onto the last
   * snapshot; one whose records show no identity is refused (exit 2 or 3) and not kept.
   */
  private async stage(capture: SnapshotCapture, held: Held, meta: Parameters<SnapshotCapture['stage']>[0], since: PartialNight | undefined, notKept: (error: unknown) => SgqError): Promise<StagedSnapshot> {
    try {
      capture.checkIdentity('not stored as a snapshot');
      if (!since) return await capture.stage(meta);
      return await stagePartial(this.store, held.subject, since.base, capture.sorted(), { ...meta, pages: capture.pages, since: since.since });
    } catch (error) {
      capture.discard();
      await this.release(held);
      throw isSystemError(error) ? notKept(error) : error;
    }
  }

  /** A user's snapshot that the store could not take (a full disk, no descriptor left): one line, and the run stops taking users. */
  private notKept(error: unknown, changes: boolean): SgqError {
    const then = changes ? 'none of its changes were printed' : 'its records were written';
    return fileError(error, { what: `cannot store its snapshot in ${this.store.root}`, exitCode: ExitCode.internal, then });
  }

  private async lockSubject(subject: SnapshotSubject): Promise<{ release(): void }> {
    try {
      return await this.store.lockSubject(subject);
    } catch (error) {
      if (error instanceof SgqError) throw error;
      throw storeError(this.store.folder(subject), error);
    }
  }

  private async release(held: Held): Promise<void> {
    this.held.delete(held.user);
    this.staged.delete(held);
    await held.staged?.close().catch(() => undefined);
    held.lock.release();
  }
}

/**
 * The counts of a snapshot taken without --changes: its diff against the one before (under
 * --confirm-lost, its window), counted only. One that cannot be counted (the two share no identity field) is stored uncounted, as
 * before: `sgq history` shows nulls for it and says why.
 */
async function countQuietly(staged: StagedSnapshot, { reporter }: JobEnd, counted: () => Promise<SnapshotCounts>): Promise<SnapshotCounts | undefined> {
  try {
    return await counted();
  } catch (error) {
    reporter.trace(`${staged.current.meta.user}: snapshot not counted against the one before: ${(error as Error).message}`);
    return undefined;
  }
}

/** A whole snapshot is kept: the note of a run cut short is done with (a hint: a failure to remove it costs one whole night). */
function forgetWholeNext(folder: string): void {
  try {
    clearWholeNext(folder);
  } catch {
    // Left: the next run is whole once more.
  }
}

function storeError(where: string, error: unknown): SgqError {
  return fileError(error, { what: `cannot write the snapshot store ${where}`, exitCode: ExitCode.internal, then: 'nothing was fetched (--snapshot-dir chooses another store)' });
}
