import { linkSync, readFileSync, readdirSync, renameSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { ExitCode, SgqError } from '../../core/errors.js';
import { runTag } from './run-tag.js';

// An exclusive lock per --out file and per --since-last state file: `FILE.lock`, holding the
// holder's pid, host and process start time. It is created whole with link(2), which fails
// if the name exists, so nobody ever reads a half-written lock. A lock whose holder is gone
// (a kill -9) is taken over: moved aside under a unique name, checked to be the very file
// judged stale (inode and content), and only then removed. A lock held by a process that
// is alive on this host, or by any process on another host, is busy.
//
// Why not proper-lockfile: it judges staleness by an mtime it refreshes on a timer, so a
// killed run would block the next one for the whole stale period, a busy event loop counts
// as a lost lock, and it cannot name the holder's pid, which the message must give.

interface Holder {
  pid: number;
  host: string;
  /** The holder's start time as the kernel counts it (Linux), so a reused pid is not mistaken for it. */
  start?: string;
}

export interface Lock {
  readonly file: string;
  release(): void;
}

export interface LockOptions {
  /** How long to wait for a busy lock (--wait-lock), in ms; 0 fails at once. */
  waitMs: number;
  /** Aborted by SIGINT/SIGTERM: stop waiting. */
  signal?: AbortSignal;
  /** What the lock guards, for messages: "--out report.ndjson". */
  what: string;
  /** The flag text given, for messages: "--wait-lock 30s". */
  waitFlag?: string;
  /** Told once when the lock is busy and the run starts waiting for it. */
  onWait?: (line: string) => void;
}

const MAX_POLL_MS = 1000;

/** Takes the lock beside `target`, waiting up to `waitMs` for a live holder (exit 8 past that). */
export async function acquireLock(target: string, options: LockOptions): Promise<Lock> {
  const file = `${target}.lock`;
  const me: Holder = { pid: process.pid, host: hostname(), start: processStart(process.pid) };
  const deadline = Date.now() + options.waitMs;
  for (let delay = 25; ; delay = Math.min(delay * 2, MAX_POLL_MS)) {
    const taken = attempt(file, me);
    if ('ino' in taken) {
      removeFilesOfDeadRuns(dirname(file), new RegExp(`^${escapeRegExp(basename(file))}\\.(?:stale\\.)?(\\d+)\\.[0-9a-f]+$`));
      return heldLock(file, taken.ino);
    }
    const left = deadline - Date.now();
    if (left <= 0) throw busyError(file, taken, options);
    if (delay === 25) options.onWait?.(`sgq: waiting for ${options.what}, in use by pid ${taken.pid} (${options.waitFlag ?? 'lock'})`);
    try {
      await sleep(Math.min(delay, left), undefined, { signal: options.signal });
    } catch {
      const reason = options.signal?.reason as unknown;
      throw new SgqError(reason === 'SIGTERM' ? ExitCode.terminated : ExitCode.interrupted, `interrupted while waiting for ${options.what} (locked by pid ${taken.pid})`);
    }
  }
}

function attempt(file: string, me: Holder): { ino: number } | Holder {
  try {
    return tryTake(file, me);
  } catch (error) {
    // A full disk or a read-only folder: say so in one line, before anything is fetched.
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new SgqError(ExitCode.internal, `cannot create the lock file ${file}: ${code}`, 'check free space and permissions; nothing was fetched');
  }
}

/** One attempt: our inode when we got the lock, or the live holder that has it. */
function tryTake(file: string, me: Holder): { ino: number } | Holder {
  const mine = `${file}.${runTag()}`;
  writeFileSync(mine, JSON.stringify(me), { flag: 'wx', mode: 0o644 });
  try {
    for (;;) {
      try {
        linkSync(mine, file);
        return { ino: statSync(mine).ino };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const seen = readLock(file);
      if (!seen) continue; // released between our link and our read: try again
      if (isAlive(seen.holder)) return seen.holder;
      removeStale(file, seen);
    }
  } finally {
    unlinkSync(mine);
  }
}

interface Seen {
  holder: Holder;
  ino: number;
  text: string;
}

function readLock(file: string): Seen | undefined {
  try {
    const ino = statSync(file).ino;
    const text = readFileSync(file, 'utf8');
    return { holder: parseHolder(text), ino, text };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** A lock sgq did not write whole (hand-made, or from another tool) has no live holder. */
function parseHolder(text: string): Holder {
  try {
    const parsed = JSON.parse(text) as Partial<Holder>;
    if (typeof parsed.pid === 'number' && typeof parsed.host === 'string') return parsed as Holder;
  } catch {
    // falls through
  }
  return { pid: 0, host: hostname() };
}

/**
 * Removes the stale lock `seen`, and nothing else: the name may already hold a newer, live
 * lock taken by a run that got there first, so what was moved aside is checked and put back
 * if it is not the one judged stale.
 */
function removeStale(file: string, seen: Seen): void {
  const aside = `${file}.stale.${runTag()}`;
  try {
    renameSync(file, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  const moved = readLock(aside);
  if (moved && (moved.ino !== seen.ino || moved.text !== seen.text)) {
    try {
      linkSync(aside, file);
    } catch {
      // A third run took the name meanwhile; it holds the lock now.
    }
  }
  unlinkSync(aside);
}

function isAlive(holder: Holder): boolean {
  if (holder.host !== hostname()) return true; // cannot tell: assume it runs
  if (holder.pid <= 0) return false;
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  const start = processStart(holder.pid);
  return holder.start === undefined || start === undefined || start === holder.start;
}

/** The process's start time in clock ticks since boot (field 22 of /proc/PID/stat); undefined off Linux. */
function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/**
 * Removes the files a killed run left in `folder` (temporary files it had no time to rename
 * or remove): those whose name matches `pattern`, with the pid in its first group, of a
 * process that is gone. Called by the lock's holder, so no live run is writing them.
 */
export function removeFilesOfDeadRuns(folder: string, pattern: RegExp): void {
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = pattern.exec(name)?.[1];
    if (pid !== undefined && !processAlive(Number(pid))) rmSync(join(folder, name), { force: true });
  }
}

/** Whether the process with this pid on this host still runs (for files named after their run). */
export const processAlive = (pid: number): boolean => isAlive({ pid, host: hostname() });

export const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function heldLock(file: string, ino: number): Lock {
  let held = true;
  const release = () => {
    if (!held) return;
    held = false;
    process.removeListener('exit', release);
    try {
      // Only our own lock: never one a later run has taken over.
      if (statSync(file).ino === ino) unlinkSync(file);
    } catch {
      // already gone
    }
  };
  // A second Ctrl-C ends the process with process.exit: the lock goes with it.
  process.once('exit', release);
  return { file, release };
}

function busyError(file: string, holder: Holder, options: LockOptions): SgqError {
  const who = `pid ${holder.pid}${holder.host === hostname() ? '' : ` on ${holder.host}`}`;
  const waited = options.waitMs > 0 ? ` after ${options.waitFlag ?? `waiting ${options.waitMs} ms`}` : '';
  return new SgqError(
    ExitCode.locked,
    `${options.what} is in use by another sgq run (${who}; lock ${file})${waited}`,
    options.waitMs > 0 ? 'wait longer with a larger --wait-lock, or stop that run' : 'wait for that run to end, or add --wait-lock 5m to wait for it',
  );
}
