import { basename, dirname, join } from 'node:path';
import { ExitCode, configError } from '../../core/errors.js';
import { parseSince } from '../../core/since.js';
import { replaceFile } from '../../fs/atomic.js';
import { acquireLock, type Lock, type LockOptions } from '../../fs/lock.js';
import { makePrivateFolder } from '../../fs/modes.js';
import { fileError, isSystemError } from '../../fs/file-errors.js';
import { readRegularFile } from '../../fs/read.js';
import { sweepLeftovers } from '../../fs/sweep.js';
import { STREAMING_COMMIT_MS, type Checkpoint } from './checkpoint.js';
import { adoptsLegacyState, serviceName, type StateOwner } from '../../core/service.js';

// --since-last: per service, profile, route, how and user, the start of the last complete run.
// The file holds each service's marks apart (`services`, keyed by service.ts): a sandbox run,
// or a profile pointed at another service, never reads or moves the marks of another. The
// flat `marks` of sgq 3.x (no service) are adopted once, by the first run of the profile on a
// service other than the sandbox, so the first nightly run after an upgrade sends the same since.
// A run holds the state file's lock from start to end, so nobody else changes it meanwhile.
// Marks of finished users are staged and committed in batches by the run's scope, once the
// output holding their records is safe (checkpoint.ts): the whole JSON file is written to a temporary file, flushed and renamed
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
const COMMIT_SPACING = 20;

/** The `since` a user's run sends, from its mark; a mark later than the run's start is not sent. */
export interface SinceFromMark {
  since?: string;
  /** The mark, when it lies after the run's start (written while the clock was ahead). */
  future?: string;
}

/** The --since-last marks of a run: a checkpoint (see checkpoint.ts) that the run's scope commits. */
export class SinceMarks implements Checkpoint {
  private readonly staged = new Map<string, string>();
  /** Users of a run mostly get the same mark: worked out once per instant, not per user. */
  private stagedMark?: { at: number; mark: string };
  private nextCommit = Date.now() + STREAMING_COMMIT_MS;

  private readonly marks: Record<string, string>;

  private constructor(
    readonly file: string,
    /** The whole file: every service's marks and the ones of 3.x not yet adopted. */
    private readonly stored: MarksFile,
    private readonly owner: StateOwner,
    private readonly lock: Lock,
  ) {
    this.marks = (stored.services[owner.service] ??= {});
  }

  /** Takes the state file's lock (waiting as --wait-lock says) and reads the marks of `owner`'s service, adopting those of 3.x once. */
  static async open(file: string, owner: StateOwner, lockOptions: Omit<LockOptions, 'what'>): Promise<SinceMarks> {
    try {
      makePrivateFolder(dirname(file));
    } catch (error) {
      throw fileError(error, { what: `cannot create the folder of the --since-last state ${file}`, exitCode: ExitCode.config, then: 'nothing was fetched (--state chooses another file)' });
    }
    const lock = await acquireLock(file, { ...lockOptions, what: `the --since-last state ${file}` });
    try {
      sweepLeftovers(dirname(file), basename(file));
      const marks = new SinceMarks(file, readMarks(file), owner, lock);
      if (marks.adoptLegacy()) marks.writeFile();
      return marks;
    } catch (error) {
      lock.release();
      throw error;
    }
  }

  /** The marks as they are, for `--dry-run`: read without the lock, never written (3.x marks read as a run would adopt them). */
  static peek(file: string, owner: StateOwner): SinceMarks {
    const marks = new SinceMarks(file, readMarks(file), owner, { file, release: () => undefined });
    marks.adoptLegacy();
    return marks;
  }

  /** Moves the 3.x marks of the owner's profile under its service (see above); true when there were any. */
  private adoptLegacy(): boolean {
    const { legacy } = this.stored;
    if (!legacy || !adoptsLegacyState(this.owner)) return false;
    let adopted = false;
    for (const [key, mark] of Object.entries(legacy)) {
      if (!ofProfile(key, this.owner.profile)) continue;
      this.marks[key] ??= mark;
      delete legacy[key];
      adopted = true;
    }
    return adopted;
  }

  /** The mark of `key` as the file holds it. */
  get(key: string): string | undefined {
    return this.marks[key];
  }

  get what(): string {
    return `the --since-last marks of ${serviceName(this.owner.service)} in ${this.file}`;
  }

  /**
   * The `since` to send for `key` in a run started at `startedAt`. A mark after that instant
   * was written by a clock that was ahead: sent, it would ask for the future and get nothing,
   * so it is not sent (the user's records are fetched whole) and the caller says so.
   */
  sinceFor(key: string, startedAt: Date): SinceFromMark {
    const mark = this.marks[key];
    if (mark === undefined) return {};
    const at = Date.parse(mark);
    return Number.isNaN(at) || at <= startedAt.getTime() ? { since: mark } : { future: mark };
  }

  /** A user's records are all fetched, as of `asOf`: its mark moves there when the run's output is durable. */
  stage(key: string, asOf: Date): void {
    const at = asOf.getTime();
    if (this.stagedMark?.at !== at) this.stagedMark = { at, mark: parseSince(asOf.toISOString()) };
    this.staged.set(key, this.stagedMark.mark);
  }

  get pending(): boolean {
    return this.staged.size > 0;
  }

  /** While output streams, commits are spaced so that a large state file costs a small share of the run. */
  get due(): boolean {
    return this.pending && Date.now() >= this.nextCommit;
  }

  /** Writes the staged marks durably, or throws and keeps the file as it was. */
  commit(): Promise<void> {
    return this.cut()();
  }

  /** The marks staged now; a mark staged after this instant waits for the next commit. */
  cut(): () => Promise<void> {
    const cut = new Map(this.staged);
    this.staged.clear();
    return async () => this.write(cut);
  }

  private write(cut: ReadonlyMap<string, string>): void {
    const began = Date.now();
    if (cut.size === 0) return;
    // Merged in place rather than into a copy of every mark, and taken back if the write fails.
    const before = new Map<string, string | undefined>();
    for (const [key, mark] of cut) {
      before.set(key, this.marks[key]);
      this.marks[key] = mark;
    }
    try {
      this.writeFile();
    } catch (error) {
      for (const [key, mark] of before) {
        if (mark === undefined) delete this.marks[key];
        else this.marks[key] = mark;
      }
      throw fileError(error, { what: `cannot save the --since-last marks in ${this.file}`, exitCode: ExitCode.internal, then: 'the records were written, but the next run will fetch them again' });
    }
    const now = Date.now();
    this.nextCommit = now + Math.max(STREAMING_COMMIT_MS, COMMIT_SPACING * (now - began));
  }

  /** Replaces the file with every service's marks (throws when it cannot). */
  private writeFile(): void {
    const { services, legacy } = this.stored;
    const shape = legacy && Object.keys(legacy).length > 0 ? { services, marks: legacy } : { services };
    replaceFile(this.file, `${JSON.stringify(shape, null, 2)}\n`);
  }

  /** Forgets marks not committed: their records were not kept. */
  async drop(): Promise<void> {
    this.staged.clear();
  }

  /** Lets other runs in. */
  async close(): Promise<void> {
    this.staged.clear();
    this.lock.release();
  }
}

/** The file: each service's marks, and the flat marks of sgq 3.x not yet adopted. */
interface MarksFile {
  services: Record<string, Record<string, string>>;
  legacy?: Record<string, string>;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function readMarks(file: string): MarksFile {
  try {
    const parsed: unknown = JSON.parse(readRegularFile(file, 'utf8'));
    if (!isObject(parsed)) throw new Error('not a JSON object');
    const { services, marks } = parsed;
    if (services === undefined && marks === undefined) throw new Error('no "services" object');
    if (services !== undefined && (!isObject(services) || !Object.values(services).every(isObject))) throw new Error('"services" is not an object of objects');
    if (marks !== undefined && !isObject(marks)) throw new Error('"marks" is not an object');
    return { services: (services ?? {}) as MarksFile['services'], legacy: marks as Record<string, string> | undefined };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { services: {} };
    // The file is there but cannot be read (permissions, no descriptor left, a FIFO): the file system's words.
    if (isSystemError(error)) throw fileError(error, { what: `cannot read the --since-last state ${file}`, exitCode: ExitCode.config, then: 'nothing was fetched' });
    throw configError(`cannot read the --since-last state ${file}: ${(error as Error).message}`, 'fix or delete it (the next run then sends no since)');
  }
}

/** Whether a 3.x key (`profile route how user`) is of `profile`: the profile, then a route path. */
function ofProfile(key: string, profile: string): boolean {
  return key.startsWith(`${profile} `) && key.slice(profile.length + 1).split(' ', 1)[0]!.includes('/');
}
