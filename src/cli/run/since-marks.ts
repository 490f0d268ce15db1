import { mkdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { ExitCode, SgqError, configError } from '../../core/errors.js';
import { parseSince } from '../../core/since.js';
import { replaceFile } from '../../fs/atomic.js';
import { acquireLock, type Lock, type LockOptions } from '../../fs/lock.js';
import { readRegularFile } from '../../fs/read.js';
import { sweepLeftovers } from '../../fs/sweep.js';

// --since-last: per profile, route, how and user, the start of the last complete run.
// A run holds the state file's lock from start to end, so nobody else changes it meanwhile.
// Marks of finished users are staged and committed in batches, once the output holding their
// records is safe: the whole JSON file is written to a temporary file, flushed and renamed
// over the old one, so a crash leaves the old marks or the new ones and at worst loses marks,
// never claims records that were not written. A commit costs O(marks in the file), so a run
// over n users commits once at its end and, while records stream out, seldom enough that
// committing takes a small share of the run however large the file grows.

export const markKey = (profile: string, route: string, how: string, user: string): string =>
  [profile, route, how, user].join(' ');

/** `state` is --state; otherwise SGQ_STATE, otherwise since-marks.json beside the config file. */
export function marksFile(state: string | undefined, env: Record<string, string | undefined>, configPath: string | undefined): string {
  return state ?? env.SGQ_STATE ?? join(configPath ? dirname(configPath) : '.', 'since-marks.json');
}

/**
 * While records stream out, a commit at most once a second, so a long run keeps its progress,
 * and no sooner than COMMIT_SPACING times the last commit took, so that a large state file
 * (about 90 bytes a mark) costs at most some 5% of the run instead of a commit a second.
 */
const STREAMING_COMMIT_MS = 1000;
const COMMIT_SPACING = 20;

export class SinceMarks {
  private readonly staged = new Map<string, string>();
  /** Every user of a run gets the same mark, the run's start: worked out once, not per user. */
  private stagedMark?: { at: Date; mark: string };
  private nextCommit = Date.now() + STREAMING_COMMIT_MS;
  /** For output that streams (stdout): commit as users finish, while this says the output is safe. */
  private streamingSafe?: () => boolean;
  /** A commit that failed: the run must not end with exit 0. */
  failure?: SgqError;

  private constructor(
    readonly file: string,
    private readonly marks: Record<string, string>,
    private readonly lock: Lock,
  ) {}

  /** Takes the state file's lock (waiting as --wait-lock says) and reads the marks. */
  static async open(file: string, lockOptions: Omit<LockOptions, 'what'>): Promise<SinceMarks> {
    try {
      mkdirSync(dirname(file), { recursive: true });
    } catch (error) {
      throw configError(`cannot create the folder of the --since-last state ${file}: ${(error as NodeJS.ErrnoException).code}`, 'check its permissions, or choose another with --state');
    }
    const lock = await acquireLock(file, { ...lockOptions, what: `the --since-last state ${file}` });
    try {
      sweepLeftovers(dirname(file), basename(file));
      return new SinceMarks(file, readMarks(file), lock);
    } catch (error) {
      lock.release();
      throw error;
    }
  }

  /** The marks as they are, for `--dry-run`: read without the lock, never written. */
  static peek(file: string): SinceMarks {
    return new SinceMarks(file, readMarks(file), { file, release: () => undefined });
  }

  /** The `since` to send, or undefined on the first run. */
  get(key: string): string | undefined {
    return this.marks[key];
  }

  /** A user's records are all written: its mark moves to `startedAt` at the next commit. */
  stage(key: string, startedAt: Date): void {
    if (this.stagedMark?.at !== startedAt) this.stagedMark = { at: startedAt, mark: parseSince(startedAt.toISOString()) };
    this.staged.set(key, this.stagedMark.mark);
    if (this.streamingSafe && Date.now() >= this.nextCommit && this.streamingSafe()) this.commit();
  }

  /** Output that streams commits as it goes, whenever `safe()` says every record so far has left sgq. */
  commitWhileStreaming(safe: () => boolean): void {
    this.streamingSafe = safe;
  }

  /** Writes the staged marks durably; a failure is kept in `failure` and stops further commits. */
  commit(): void {
    const began = Date.now();
    if (this.staged.size === 0 || this.failure) return;
    // Merged in place rather than into a copy of every mark, and taken back if the write fails.
    const before = new Map<string, string | undefined>();
    for (const [key, mark] of this.staged) {
      before.set(key, this.marks[key]);
      this.marks[key] = mark;
    }
    try {
      replaceFile(this.file, `${JSON.stringify({ marks: this.marks }, null, 2)}\n`);
    } catch (error) {
      for (const [key, mark] of before) {
        if (mark === undefined) delete this.marks[key];
        else this.marks[key] = mark;
      }
      this.failure = new SgqError(
        ExitCode.internal,
        `cannot save the --since-last marks in ${this.file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
        'the records were written, but the next run will fetch them again; check free space and permissions',
      );
      return;
    }
    this.staged.clear();
    const now = Date.now();
    this.nextCommit = now + Math.max(STREAMING_COMMIT_MS, COMMIT_SPACING * (now - began));
  }

  /** Drops marks not committed (their records were not kept) and lets other runs in. */
  close(): void {
    this.streamingSafe = undefined;
    this.staged.clear();
    this.lock.release();
  }
}

function readMarks(file: string): Record<string, string> {
  try {
    const parsed: unknown = JSON.parse(readRegularFile(file, 'utf8'));
    if (parsed && typeof parsed === 'object' && 'marks' in parsed && typeof parsed.marks === 'object' && parsed.marks && !Array.isArray(parsed.marks)) {
      return parsed.marks as Record<string, string>;
    }
    throw new Error('no "marks" object');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw configError(`cannot read the --since-last state ${file}: ${(error as Error).message}`, 'fix or delete it (the next run then sends no since)');
  }
}
