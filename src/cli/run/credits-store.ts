import { dirname, join } from 'node:path';
import { replaceFile } from '../../fs/atomic.js';
import { makePrivateFolder } from '../../fs/modes.js';
import { readRegularFile } from '../../fs/read.js';

// What sgq saw of the account, per profile: the last balance (every run that got a
// `current_credits` records it, so `sgq credits` answers without a call) and the price it
// measured for each route (README "Prices"). The file holds balances, prices, times, routes
// and service addresses: never a key.

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

export function readBalances(file: string): Record<string, SeenBalance> {
  return readStore(file).profiles;
}

/** The prices observed on a profile, route by route, on the service at `baseUrl`; a hand-damaged entry is skipped. */
export function readObservedPrices(file: string, profile: string, baseUrl: string | undefined): Map<string, number> {
  const found = new Map<string, number>();
  const routes = readStore(file).prices[profile];
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

/** Records what a run saw for a profile; throws when the file cannot be written (the caller decides how loud to be). */
export function recordSeen(file: string, profile: string, seen: SeenByRun): void {
  const { found, ...store } = readStore(file);
  if (seen.balance) store.profiles[profile] = seen.balance;
  if (seen.prices) store.prices[profile] = { ...(isRecord(store.prices[profile]) ? store.prices[profile] : {}), ...seen.prices };
  // A file just read has its folder; only the first note (or one after the folder went) makes it.
  if (!found) makePrivateFolder(dirname(file));
  // Replaced atomically (a run reading it sees the old file or the new one) but not flushed to
  // disk: a note of the last balance is not worth two fsyncs (1-5 ms) in every command, and
  // a file lost or damaged by a crash reads as nothing known until the next run writes it.
  const shape = Object.keys(store.prices).length ? store : { profiles: store.profiles };
  replaceFile(file, `${JSON.stringify(shape, null, 2)}\n`, { durable: false });
}
