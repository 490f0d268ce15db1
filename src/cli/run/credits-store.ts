import { statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DEFAULT_PROFILE } from '../../core/config.js';
import { replaceFile } from '../../fs/atomic.js';
import { makePrivateFolder } from '../../fs/modes.js';
import { readRegularFile } from '../../fs/read.js';

// What sgq saw of the account, per profile: the last balance (every run that got a
// `current_credits` records it, so `sgq credits` answers without a call) and the price it
// measured for each route (README "Prices"). The file holds balances, prices, times, routes
// and service addresses: never a key. The default profile's note is in credits.json, as it
// always was; another profile's in a file of its own beside it (credits.PROFILE.json), so that
// runs of different profiles never write the same file: with no lock (a lock would cost every
// run more than the note is worth), one run's rename could otherwise undo another's note.

export interface SeenBalance {
  credits: number;
  /** When it was seen, ISO 8601 UTC. */
  seen_at: string;
  /** The route whose answer reported it. */
  route: string;
  base_url: string;
}

/** A route's price as measured from the balance before and after a call. */
export interface ObservedPrice {
  credits: number;
  seen_at: string;
  /** The service it was measured on: a profile pointed elsewhere does not use it. */
  base_url: string;
}

interface StoreShape {
  profiles: Record<string, SeenBalance>;
  /** Profile → route path → price. */
  prices: Record<string, Record<string, ObservedPrice>>;
}

/** `credits.json` beside the config file; undefined when there is no place for it (no home folder). */
export function creditsFile(configPath: string | undefined): string | undefined {
  return configPath === undefined ? undefined : join(dirname(configPath), 'credits.json');
}

/** Where `profile`'s note is written: `file` (credits.json) for the default profile, credits.PROFILE.json beside it for another. */
export function noteFile(file: string, profile: string): string {
  if (profile === DEFAULT_PROFILE) return file;
  // Any profile name as one file name: '/' and what Windows refuses are escaped.
  const name = encodeURIComponent(profile).replace(/[*!'()~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return join(dirname(file), `credits.${name}.json`);
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The store as read; `found` says the file was there and read whole (so its folder exists). */
function readStore(file: string): StoreShape & { found: boolean } {
  let text: string;
  try {
    text = readRegularFile(file, 'utf8');
  } catch {
    // Missing, unreadable or not a regular file: nothing known, and the next run writes it afresh.
    return { profiles: {}, prices: {}, found: false };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined; // damaged: nothing known, written afresh below
  }
  const profiles = isRecord(parsed) && isRecord(parsed.profiles) ? parsed.profiles : {};
  const prices = isRecord(parsed) && isRecord(parsed.prices) ? parsed.prices : {};
  return { profiles, prices, found: true } as StoreShape & { found: boolean };
}

/**
 * The store holding `profile`'s note: its own file, or, where it has none yet, credits.json
 * (sgq before 3.4 kept every profile's note there).
 */
function readProfile(file: string, profile: string): StoreShape & { found: boolean } {
  const own = noteFile(file, profile);
  const store = readStore(own);
  return store.found || own === file ? store : { ...onlyProfile(readStore(file), profile), found: false };
}

/** The entries of `profile` alone. */
function onlyProfile(store: StoreShape, profile: string): StoreShape {
  const pick = <T>(of: Record<string, T>) => (Object.hasOwn(of, profile) ? { [profile]: of[profile]! } : {});
  return { profiles: pick(store.profiles), prices: pick(store.prices) };
}

/** The last balance seen on `profile`, if any. */
export function readBalance(file: string, profile: string): SeenBalance | undefined {
  const { profiles } = readProfile(file, profile);
  return Object.hasOwn(profiles, profile) ? profiles[profile] : undefined;
}

/** The prices observed on a profile, route by route, on the service at `baseUrl`; a hand-damaged entry is skipped. */
export function readObservedPrices(file: string, profile: string, baseUrl: string | undefined): Map<string, number> {
  const found = new Map<string, number>();
  const routes = readProfile(file, profile).prices[profile];
  if (!isRecord(routes)) return found;
  for (const [route, seen] of Object.entries(routes)) {
    if (!isRecord(seen) || !Number.isSafeInteger(seen.credits) || (seen.credits as number) < 0) continue;
    if (baseUrl !== undefined && seen.base_url !== baseUrl) continue;
    found.set(route, seen.credits as number);
  }
  return found;
}

/** What a run adds to the store: its last balance, and prices it observed. */
export interface SeenByRun {
  balance?: SeenBalance;
  prices?: Record<string, ObservedPrice>;
}

/**
 * How many times a note is merged again into what another run wrote meanwhile, before it is
 * written over it anyway (a note lost, never a run held up).
 */
const MERGES = 8;

/**
 * Records what a run saw for a profile in its file (noteFile); throws when the file cannot be
 * written (the caller decides how loud to be). Runs of the same profile may still end at the
 * same time: just before the rename, the file is checked to be the one that was read (its
 * inode, size and times), and read and merged again if another run replaced it meanwhile, so
 * that the prices of the routes each observed are kept.
 */
export function recordSeen(file: string, profile: string, seen: SeenByRun): void {
  const target = noteFile(file, profile);
  let stamp = stampOf(target);
  let store = readProfile(file, profile);
  // A file just read has its folder; only the first note (or one after the folder went) makes it.
  if (!store.found) makePrivateFolder(dirname(target));
  for (let merges = 1; ; merges++) {
    let now = stamp;
    // Replaced atomically (a run reading it sees the old file or the new one) but not flushed to
    // disk: a note of the last balance is not worth two fsyncs (1-5 ms) in every command, and
    // a file lost or damaged by a crash reads as nothing known until the next run writes it.
    const proceed = () => (now = stampOf(target)) === stamp || merges === MERGES;
    if (replaceFile(target, merged(store, profile, seen), { durable: false, proceed })) return;
    stamp = now;
    store = readProfile(file, profile);
  }
}

/** The store with what the run saw for `profile`, as the file's text. */
function merged(store: StoreShape, profile: string, seen: SeenByRun): string {
  if (seen.balance) store.profiles[profile] = seen.balance;
  if (seen.prices) store.prices[profile] = { ...(isRecord(store.prices[profile]) ? store.prices[profile] : {}), ...seen.prices };
  const { profiles, prices } = store;
  const shape = Object.keys(prices).length ? { profiles, prices } : { profiles };
  return `${JSON.stringify(shape, null, 2)}\n`;
}

/** Which version of the file is in place: another run's rename changes its inode, and its times. */
function stampOf(file: string): string | undefined {
  try {
    const stat = statSync(file, { bigint: true, throwIfNoEntry: false });
    return stat && `${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`;
  } catch {
    return undefined; // as readStore: nothing known
  }
}
