import type { SgqError } from '../../core/errors.js';

// The port of everything that claims a run kept data: --since-last marks, snapshots and
// their changes. A job stages what its completed fetch would claim; the run's scope commits
// it only once the output holding that data is durable (a file fsynced and renamed, stdout
// written and flushed without error), and drops it otherwise. This is the one rule: nothing
// that claims data was kept advances before the data is safe, and a failure leaves every
// checkpoint where it was. The scope (scope.ts) is the only caller of commit() and drop().

/**
 * While output streams, a checkpoint commits at most this often: each commit rewrites files
 * (the whole marks file, a snapshot per user) and seals a --dataset part, so committing at
 * every user's end would write a Parquet file per user.
 */
export const STREAMING_COMMIT_MS = 1000;

export interface Checkpoint {
  /** What it keeps and where, for messages: "the --since-last marks in FILE". */
  readonly what: string;
  /** Whether anything is staged and not yet committed. */
  readonly pending: boolean;
  /** Worth committing now, while output streams (at most once a second: STREAMING_COMMIT_MS; the marks space theirs more when their file is large). */
  readonly due: boolean;
  /**
   * Takes the cut: what is staged at this instant, when the caller has just found the output
   * covering it durable. Returns what makes exactly that cut durable (it throws an SgqError if
   * it cannot: the run then drops what is staged). What is staged after the cut is not in it:
   * its output was not checked, so it waits for the next commit.
   */
  cut(): () => Promise<void>;
  /** Forgets what is staged: the output covering it was not kept. */
  drop(): Promise<void>;
  /** Lets go of what it holds (locks, open files), after a commit or a drop. */
  close(): Promise<void>;
  /** A commit of the run failed (this checkpoint's or another's): what it holds is dropped next, and nothing is kept from then on. */
  failedCommit?(error: unknown): void;
  /** The users whose staged results a failed commit dropped, since the last call: the run lists them for the resume. */
  takeLost?(): (string | null)[];
}

/** The checkpoints of one run, committed and dropped together, in the order they were opened. */
export class Checkpoints {
  private readonly all: Checkpoint[] = [];
  /** The first commit that failed: the run must not end with exit 0, and nothing commits after it. */
  failure?: SgqError;
  private queue: Promise<void> = Promise.resolve();
  /** Commits taken (cut) and not yet written. */
  private committing = 0;

  add<T extends Checkpoint>(checkpoint: T): T {
    this.all.push(checkpoint);
    return checkpoint;
  }

  get pending(): boolean {
    return this.all.some((c) => c.pending);
  }

  /**
   * Worth committing now, while output streams: not while a commit is being written. A job that
   * ended meanwhile would otherwise cut another commit and wait behind the first (its next user
   * not started): over 400 accounts at --concurrency 8, 69 commits of some 150 ms each instead
   * of one a second, up to 6 of the 8 jobs waiting on them. What it staged waits for the next.
   */
  get due(): boolean {
    return this.committing === 0 && this.all.some((c) => c.due);
  }

  /**
   * Called only when the output covering everything staged is durable, and in the same tick:
   * the cut is taken here, not when an earlier commit still being written lets this one run,
   * since what jobs stage meanwhile is covered by no check.
   */
  commit(): Promise<void> {
    const cuts = this.all.filter((c) => c.pending).map((c) => c.cut());
    this.committing++;
    return this.serially(() => this.commitAll(cuts)).finally(() => this.committing--);
  }

  drop(): Promise<void> {
    return this.serially(() => this.dropAll());
  }

  /** Jobs end concurrently: one commit or drop at a time, each seeing what the last one left. */
  private serially(step: () => Promise<void>): Promise<void> {
    this.queue = this.queue.then(step, step);
    return this.queue;
  }

  private async commitAll(cuts: readonly (() => Promise<void>)[]): Promise<void> {
    if (this.failure) return this.dropAll();
    for (const commit of cuts) {
      try {
        await commit();
      } catch (error) {
        this.failure = error as SgqError;
        // Each checkpoint learns that nothing is kept from now on, before what it staged is dropped.
        for (const checkpoint of this.all) checkpoint.failedCommit?.(error);
        return this.dropAll();
      }
    }
  }

  private async dropAll(): Promise<void> {
    for (const checkpoint of this.all) await checkpoint.drop().catch(() => undefined);
  }

  /** In the reverse order of opening, whatever happened; never throws. */
  async close(): Promise<void> {
    await this.queue.catch(() => undefined);
    for (const checkpoint of [...this.all].reverse()) await checkpoint.close().catch(() => undefined);
  }

  /** After a failed commit, the users whose staged results it dropped since the last call (none for the marks: their records were written); undefined while no commit failed. */
  takeLost(): (string | null)[] | undefined {
    if (!this.failure) return undefined;
    return this.all.flatMap((c) => c.takeLost?.() ?? []);
  }

  /** What each checkpoint holds, for the line that says what was kept where. */
  describe(): string[] {
    return this.all.map((c) => c.what);
  }
}
