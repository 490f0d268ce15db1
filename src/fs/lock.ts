import { linkSync, renameSync, statSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { ExitCode, SgqError } from '../core/errors.js';
import { fileError } from './file-errors.js';
import { LOCK_FILE } from './modes.js';
import { processAlive, thisHost, thisProcessStart } from './owner.js';
import { readRegularFile } from './read.js';
import { STALE_MS, sweepLeftovers } from './sweep.js';
import { tempPath } from './temp-names.js';
import { removeFile } from './remove.js';

// An exclusive lock per --out file, --since-last state file and snapshot folder: `FILE.lock`,
// holding the holder's pid, host and process start time. It is created whole with link(2),
// which fails if the name exists, so nobody ever reads a half-written lock. A lock whose
// holder is gone is taken over: moved aside under a unique name, checked to be the very file
// judged stale (inode, content and heartbeat), and only then removed.
//
// Whether the holder is gone: on this host, its pid is checked at once (and its start time,
// so a reused pid is not taken for it), so a run killed with kill -9 never blocks the next
// one. On another host (a container sharing the folder) the pid means nothing here, so the
// holder refreshes the lock file's mtime every HEARTBEAT_MS (an unref'd timer, as
// proper-lockfile does), and a lock whose mtime is STALE_MS old is taken over.
//
// Why not proper-lockfile (4.1.2, last released 2020; three dependencies): its lock is a
// folder with no content, so the message could not name the holder's pid; and it judges
// every lock by its mtime alone, so a run killed on this very host would block its successor
// for the whole stale period, where a pid check frees it at once. Its heartbeat is the one
// idea worth having, and it is the one taken here, for the holders no pid check can reach.

/** How often a holder refreshes its lock's mtime; well under STALE_MS, so a busy event loop does not lose it. */
export const HEARTBEAT_MS = 10_000;
export { STALE_MS };

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
  const me: Holder = { pid: process.pid, host: thisHost(), start: thisProcessStart() };
  const deadline = Date.now() + options.waitMs;
  for (let delay = 25; ; delay = Math.min(delay * 2, MAX_POLL_MS)) {
    const taken = attempt(file, me);
    if ('held' in taken) {
      sweepLeftovers(dirname(file), basename(file));
      return heldLock(file, taken.held);
    }
    const left = deadline - Date.now();
    if (left <= 0) throw busyError(file, taken, options);
    if (delay === 25) options.onWait?.(`sgq: waiting for ${options.what}, in use by pid ${taken.holder.pid} (${options.waitFlag ?? 'lock'})`);
    try {
      // node:timers/promises only when a lock is busy: most runs never wait.
      await process.getBuiltinModule('node:timers/promises').setTimeout(Math.min(delay, left), undefined, { signal: options.signal });
    } catch {
      const reason = options.signal?.reason as unknown;
      throw new SgqError(reason === 'SIGTERM' ? ExitCode.terminated : ExitCode.interrupted, `interrupted while waiting for ${options.what} (locked by pid ${taken.holder.pid})`);
    }
  }
}

function attempt(file: string, me: Holder): { held: number } | Seen {
  try {
    return tryTake(file, me);
  } catch (error) {
    // A full disk or a read-only folder: said in one line, before what the lock guards is touched.
    throw fileError(error, { what: `cannot create the lock file ${file}`, exitCode: ExitCode.internal });
  }
}

/** One attempt: our lock's inode (`held`) when we got it, or the live holder's lock that is in the way. */
function tryTake(file: string, me: Holder): { held: number } | Seen {
  const mine = tempPath(file);
  try {
    writeFileSync(mine, JSON.stringify(me), { flag: 'wx', mode: LOCK_FILE });
  } catch (error) {
    // A full disk creates the file and then refuses its bytes: take it back, as nobody else would.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') removeFile(mine);
    throw error;
  }
  try {
    for (;;) {
      try {
        linkSync(mine, file);
        return { held: statSync(mine).ino };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const seen = readLock(file);
      if (!seen) continue; // released between our link and our read: try again
      if (!abandoned(seen)) return seen;
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
  /** The last heartbeat. */
  mtimeMs: number;
}

function readLock(file: string): Seen | undefined {
  try {
    const { ino, mtimeMs } = statSync(file);
    const text = readRegularFile(file, 'utf8');
    return { holder: parseHolder(text), ino, text, mtimeMs };
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
  return { pid: 0, host: thisHost() };
}

/** How long ago the holder's last heartbeat was; a time in the future counts as that far away (a clock that cannot be trusted). */
const heartbeatAge = (seen: Seen): number => Math.abs(Date.now() - seen.mtimeMs);

function abandoned(seen: Seen): boolean {
  if (seen.holder.host === thisHost()) return !processAlive(seen.holder.pid, seen.holder.start);
  return heartbeatAge(seen) > STALE_MS;
}

/**
 * Removes the stale lock `seen`, and nothing else: the name may already hold a newer, live
 * lock taken by a run that got there first, or the holder's heartbeat may have come
 * meanwhile, so what was moved aside is checked and put back if it is not the one judged stale.
 */
function removeStale(file: string, seen: Seen): void {
  const aside = tempPath(file);
  try {
    renameSync(file, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  const moved = readLock(aside);
  if (moved && (moved.ino !== seen.ino || moved.text !== seen.text || moved.mtimeMs !== seen.mtimeMs)) {
    try {
      linkSync(aside, file);
    } catch {
      // A third run took the name meanwhile; it holds the lock now.
    }
  }
  unlinkSync(aside);
}

/**
 * The locks this process holds, each with the inode it created. One heartbeat and one exit
 * hook serve them all: a --snapshot run holds a lock per user until its output is kept, and
 * a timer and an exit listener per lock would not scale to a batch of users.
 */
const held = new Map<string, number>();
let heartbeat: NodeJS.Timeout | undefined;

function heldLock(file: string, ino: number): Lock {
  held.set(file, ino);
  if (!heartbeat) {
    // The heartbeat: what tells a run on another host that this one is alive.
    heartbeat = setInterval(() => {
      const now = new Date();
      for (const [lock, own] of held) touch(lock, own, now);
    }, HEARTBEAT_MS);
    heartbeat.unref();
    // A second Ctrl-C ends the process with process.exit: the locks go with it.
    process.once('exit', releaseAll);
  }
  return { file, release: () => release(file, ino) };
}

function touch(file: string, ino: number, now: Date): void {
  try {
    if (statSync(file).ino === ino) utimesSync(file, now, now);
  } catch {
    // Removed by hand: nothing to refresh.
  }
}

function release(file: string, ino: number): void {
  if (held.get(file) !== ino) return;
  held.delete(file);
  try {
    // Only our own lock: never one a later run has taken over.
    if (statSync(file).ino === ino) unlinkSync(file);
  } catch {
    // already gone
  }
  if (held.size > 0 || !heartbeat) return;
  clearInterval(heartbeat);
  heartbeat = undefined;
  process.removeListener('exit', releaseAll);
}

function releaseAll(): void {
  for (const [file, ino] of [...held]) release(file, ino);
}

function busyError(file: string, seen: Seen, options: LockOptions): SgqError {
  const { holder } = seen;
  const here = holder.host === thisHost();
  const who = `pid ${holder.pid}${here ? '' : ` on ${holder.host}`}`;
  const waited = options.waitMs > 0 ? ` after ${options.waitFlag ?? `waiting ${options.waitMs} ms`}` : '';
  const message = `${options.what} is in use by another sgq run (${who}; lock ${file})${waited}`;
  if (!here) {
    // No pid check reaches another host: say when its lock counts as abandoned, and how to end it sooner.
    const left = Math.max(1, Math.ceil((STALE_MS - heartbeatAge(seen)) / 1000));
    return new SgqError(ExitCode.locked, message, `its lock counts as abandoned after ${STALE_MS / 1000} s without a heartbeat (in ${left} s, --wait-lock ${left + 5}s waits for that); if that run is gone, delete ${file}`);
  }
  return new SgqError(
    ExitCode.locked,
    message,
    options.waitMs > 0 ? 'wait longer with a larger --wait-lock, or stop that run' : 'wait for that run to end, or add --wait-lock 5m to wait for it',
  );
}
