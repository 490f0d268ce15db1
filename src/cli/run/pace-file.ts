import { dirname, join } from 'node:path';
import { replaceFile } from '../../fs/atomic.js';
import { acquireLock } from '../../fs/lock.js';
import { makePrivateFolder } from '../../fs/modes.js';
import { fileWarning } from '../../fs/file-errors.js';
import { readRegularFile } from '../../fs/read.js';
import { ownerFolder, type StateOwner } from '../../core/service.js';
import type { CallMark, PaceState, RoutePace } from '../../core/pace.js';

// The calls of a trial account, per profile and service, shared by every run of that profile
// on this machine: `pace/@SERVICE/PROFILE/calls.json` beside the config file, with the route
// limits the service stated and whether sgq learned the account is a trial one. Changed only
// under its lock (src/fs/lock.ts), read and replaced whole (src/fs/atomic.ts), so two runs
// at once never take the same slot. Times are ISO 8601 in the file, ms in memory. Not flushed
// to disk: a crash loses at most the calls of the last hour, which the service still counts.

/** How long a run waits for another to let go of the file: each holds it for a read and a write. */
const LOCK_WAIT_MS = 30_000;

/** The pace file of `owner` beside the config file; undefined when there is no place for it (no home folder). */
export function paceFile(configPath: string | undefined, owner: StateOwner): string | undefined {
  return configPath === undefined ? undefined : join(ownerFolder(join(dirname(configPath), 'pace'), owner), 'calls.json');
}

/** The pace file, or this run's memory alone once the file cannot be used (a read-only folder). */
export class PaceFile {
  private memory: PaceState = { routes: {} };

  constructor(
    private path: string | undefined,
    /** Told, once, that the file cannot be used and why. */
    private readonly failed: (line: string) => void,
  ) {}

  /** What the file holds now, without its lock (a dry run, a run's start). */
  read(): PaceState {
    if (this.path === undefined) return structuredClone(this.memory);
    try {
      return load(this.path);
    } catch (error) {
      return this.giveUp(error);
    }
  }

  /** Reads, changes and writes the file under its lock; returns what `change` returned. */
  async update<T>(change: (state: PaceState) => T, signal?: AbortSignal): Promise<T> {
    const path = this.path;
    if (path === undefined) return change(this.memory);
    let lock;
    try {
      makePrivateFolder(dirname(path));
      lock = await acquireLock(path, { waitMs: LOCK_WAIT_MS, signal, what: `the pace file ${path}` });
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      this.giveUp(error);
      return change(this.memory);
    }
    try {
      const state = load(path);
      const result = change(state);
      replaceFile(path, `${JSON.stringify(stateJson(state))}\n`, { durable: false });
      this.memory = state;
      return result;
    } catch (error) {
      this.giveUp(error);
      return change(this.memory);
    } finally {
      lock.release();
    }
  }

  /** From now on, this run's memory alone: its own calls are still paced. */
  private giveUp(error: unknown): PaceState {
    this.failed(fileWarning(error, `cannot keep the calls of a trial account in ${this.path}`, 'this run paces its own calls only'));
    this.path = undefined;
    return structuredClone(this.memory);
  }
}

/** The file's state; none yet when it is missing. Throws when it cannot be read. */
function load(path: string): PaceState {
  try {
    return parseState(readRegularFile(path, 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { routes: {} };
    throw error;
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const msOf = (v: unknown): number | undefined => (typeof v === 'string' && Number.isFinite(Date.parse(v)) ? Date.parse(v) : undefined);
const isoOf = (ms: number): string => new Date(ms).toISOString();

/** The file's text as a state; what a hand or a crash damaged is skipped, never fatal. */
function parseState(text: string): PaceState {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { routes: {} };
  }
  if (!isRecord(parsed)) return { routes: {} };
  const state: PaceState = { routes: {} };
  const learnedAt = isRecord(parsed.learned) ? msOf(parsed.learned.trial_since) : undefined;
  if (learnedAt !== undefined) state.learned = { at: learnedAt };
  for (const [route, value] of Object.entries(isRecord(parsed.routes) ? parsed.routes : {})) {
    if (isRecord(value)) state.routes[route] = parseRoute(value);
  }
  return state;
}

function parseRoute(value: Record<string, unknown>): RoutePace {
  const calls: CallMark[] = [];
  for (const call of Array.isArray(value.calls) ? value.calls : []) {
    if (!isRecord(call)) continue;
    const [at, done, lapse] = [msOf(call.at), msOf(call.done), msOf(call.lapse)];
    if (at === undefined || lapse === undefined) continue;
    calls.push({ at, lapse, ...(done === undefined ? {} : { done }), ...(typeof call.id === 'string' ? { id: call.id } : {}) });
  }
  const route: RoutePace = { calls };
  const [refusedAt, refusedUntil] = [msOf(value.refused_at), msOf(value.refused_until)];
  if (refusedAt !== undefined && refusedUntil !== undefined) Object.assign(route, { refusedAt, refusedUntil });
  if (Number.isSafeInteger(value.stated_limit) && (value.stated_limit as number) > 0) route.stated = value.stated_limit as number;
  return route;
}

/** The state as the file holds it. */
function stateJson(state: PaceState): unknown {
  const routes: Record<string, unknown> = {};
  for (const [name, route] of Object.entries(state.routes)) {
    routes[name] = {
      calls: route.calls.map((c) => ({ ...(c.id === undefined ? {} : { id: c.id }), at: isoOf(c.at), ...(c.done === undefined ? {} : { done: isoOf(c.done) }), lapse: isoOf(c.lapse) })),
      ...(route.refusedAt === undefined ? {} : { refused_at: isoOf(route.refusedAt), refused_until: isoOf(route.refusedUntil!) }),
      ...(route.stated === undefined ? {} : { stated_limit: route.stated }),
    };
  }
  return { ...(state.learned ? { learned: { trial_since: isoOf(state.learned.at) } } : {}), routes };
}
