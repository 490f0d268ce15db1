import { ExitCode, SgqError, usageError } from '../../core/errors.js';
export { openSnapshotStore } from './open-store.js';
import { SnapshotCapture } from '../../core/churn/capture.js';
import { diffMatched, matchSides } from '../../core/churn/pair.js';
import { unreadable, type OpenSnapshot, type SnapshotStore, type SnapshotSubject, type StagedSnapshot } from '../../core/churn/store.js';
import { STREAMING_COMMIT_MS, type Checkpoint } from '../run/checkpoint.js';
import type { Job, JobEnd } from '../run/runner.js';
import { changeRecords, countsText, leftOutText } from './churn-text.js';
import { grouped } from '../output/words.js';
import type { Keyed } from '../../core/churn/keyed.js';
import { accessSync, constants, mkdirSync } from 'node:fs';

export interface SnapshotFlags {
  snapshot?: boolean;
  changes?: boolean;
  snapshotDir?: string;
  all?: boolean;
  since?: string;
  sinceLast?: boolean;
  raw?: boolean;
  key?: string;
}

/** A snapshot is a whole list: the flags that would make it anything else are refused up front. */
export function checkSnapshotFlags(flags: SnapshotFlags): void {
  if (flags.changes && !flags.snapshot) throw usageError('--changes needs --snapshot', 'the changes are those against the previous snapshot');
  if (flags.snapshotDir !== undefined && !flags.snapshot) throw usageError('--snapshot-dir needs --snapshot');
  if (flags.key !== undefined && !flags.snapshot) throw usageError('--key needs --snapshot', 'it names the field that identifies an account in a snapshot');
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
  lock: { release(): void };
  staged?: StagedSnapshot;
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

  private constructor(readonly store: SnapshotStore) {}

  /** Checks the store can be written before anything is fetched. */
  static open(store: SnapshotStore): SnapshotCheckpoint {
    try {
      mkdirSync(store.root, { recursive: true });
      accessSync(store.root, constants.W_OK);
    } catch (error) {
      throw storeError(store.root, error);
    }
    return new SnapshotCheckpoint(store);
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
    let failed: { held: Held; error: unknown } | undefined;
    const lane = async () => {
      for (let held; !failed && (held = waiting.shift()); ) {
        try {
          await held.staged!.commit();
        } catch (error) {
          failed ??= { held, error };
          return;
        }
        await this.release(held);
      }
    };
    await Promise.all(Array.from({ length: COMMITS_AT_ONCE }, lane));
    if (failed) {
      throw new SgqError(ExitCode.internal, `cannot store the snapshot of ${failed.held.user} in ${this.store.root}: ${errorCode(failed.error)}`, 'the records were written; the next run compares against the snapshot before; check free space and permissions');
    }
    this.nextCommit = Date.now() + STREAMING_COMMIT_MS;
  }

  async drop(): Promise<void> {
    for (const held of this.held.values()) {
      await held.staged?.drop();
      await this.release(held);
    }
  }

  async close(): Promise<void> {
    await this.drop();
  }

  /** The hooks that keep one user's export as a snapshot, and with --changes print what changed instead. */
  hooks(subject: SnapshotSubject, takenAt: Date, changes: boolean, key?: string): Pick<Job, 'onStart' | 'onRecords' | 'hideRecords' | 'onEnd'> {
    let capture: SnapshotCapture | undefined;
    const start = () => (capture ??= new SnapshotCapture(this.store, subject, key));
    return {
      hideRecords: changes,
      onStart: async () => {
        this.held.set(subject.user, { user: subject.user, lock: await this.lockSubject(subject) });
      },
      onRecords: async (records, lossless) => {
        await start().add(records, lossless);
      },
      onEnd: async (end) => {
        const held = this.held.get(subject.user);
        const capture = start();
        if (end.cutShort || !held) {
          capture.discard();
          if (held) await this.release(held);
          end.reporter.warn(`${subject.user}: not stored as a snapshot: ${end.cutShort ?? 'its folder was not locked'}; only a complete export is kept`);
          return;
        }
        const staged = await this.stage(capture, held, { taken_at: takenAt.toISOString(), complete: true, credits_used: end.credits });
        try {
          const note = leftOutText(capture.stats, capture.sortedBy, `${subject.user}: snapshot`);
          if (note) end.reporter.warn(note);
          if (changes) await printChanges(subject, staged, end, { key, tempDir: this.store.folder(subject), inOrder: capture.inOrder });
        } catch (error) {
          await staged.drop();
          await staged.close().catch(() => undefined);
          await this.release(held);
          throw error;
        } finally {
          capture.release();
        }
        // Its files were needed for the diff only: a run of many users must not hold two open
        // files per user until the output is kept (the commit works by name).
        await staged.close();
        // Pending (so committed by the scope) only once its changes are written: another
        // user's end commits what is staged, and must not take a snapshot whose diff is running.
        held.staged = staged;
        this.staged.add(held);
      },
    };
  }

  /** Stages a complete export; one whose records show no identity is refused (exit 2 or 3) and not kept. */
  private async stage(capture: SnapshotCapture, held: Held, meta: Parameters<SnapshotCapture['stage']>[0]): Promise<StagedSnapshot> {
    try {
      capture.checkIdentity('not stored as a snapshot');
      return await capture.stage(meta);
    } catch (error) {
      capture.discard();
      await this.release(held);
      throw error;
    }
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

/** --changes: the changes of a staged snapshot against the one before, printed as records. */
async function printChanges(subject: SnapshotSubject, staged: StagedSnapshot, { emit, reporter }: JobEnd, options: { key?: string; tempDir: string; inOrder?: readonly Keyed[] }): Promise<void> {
  const who = `sgq: ${subject.user}:`;
  const { current, previous } = staged;
  if (!previous || (unreadable(previous.meta) && current.meta.records > 0)) {
    const records = `${grouped(current.meta.records)} records`;
    const why = previous ? `the previous snapshot, taken by sgq before 2.3, holds no records (it could not read records without \`username\`); this one has ${records}` : `first snapshot (${records})`;
    reporter.info(`${who} ${why}; changes are printed from the next one`);
    return;
  }
  const source = (s: OpenSnapshot, where: string, inOrder?: readonly Keyed[]) => ({ kind: 'snapshot' as const, handle: s.handle, sortedBy: s.meta.sorted_by, path: s.dataPath, where, inOrder });
  // This export's side is read from memory when it fitted there: the file just written is not read back.
  const matched = await matchSides(source(previous, `the snapshot of ${previous.meta.taken_at}`), source(current, 'this export', options.inOrder), options);
  if (matched.match.note) reporter.warn(`${subject.user}: ${matched.match.note}`);
  const renames = matched.match.by === 'id';
  const counts = await diffMatched(matched, { changed: false }, (batch) => emit(changeRecords(batch, renames), true));
  const incomplete = previous.meta.complete ? '' : ' (the previous snapshot was not complete: "lost" means "not seen")';
  reporter.info(`${who} ${countsText(counts, { changed: false, renames })} since ${previous.meta.taken_at}${incomplete}`);
}

const errorCode = (error: unknown): string => (error as NodeJS.ErrnoException).code ?? (error as Error).message;

function storeError(where: string, error: unknown): SgqError {
  return new SgqError(ExitCode.internal, `cannot write the snapshot store ${where}: ${errorCode(error)}`, 'check that it exists and is writable, or choose another with --snapshot-dir; nothing was fetched');
}
