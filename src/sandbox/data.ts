// Deterministic synthetic accounts for the sandbox. Everything derives from a hash of the
// account name, so the same name gives the same followers, ids and timestamps every run.

export const GRAPH_PAGE_SIZE = 500;
export const HISTORY_PAGE_SIZE = 100;

/** FNV-1a, 32 bit: small, fast, stable across runs and platforms. */
export function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

const NAME_OK = /^[A-Za-z0-9_]{1,32}$/;
const SYLLABLES = ['ka', 'ri', 'mo', 'ta', 'ne', 'lu', 'so', 'vi', 'da', 'pe', 'zo', 'mi', 'ra', 'jo', 'be', 'xu'];

/** Whether the sandbox has data for `user` read as `how`; names starting with nobody or ghost have none. */
export function accountExists(user: string, how: string): boolean {
  if (how === 'username') return NAME_OK.test(user) && !/^(nobody|ghost)/i.test(user);
  if (how === 'user_id' || how === 'userid' || how === 'id') return /^\d{1,20}$/.test(user);
  return false;
}

const RELATION_SPREAD = { followers: 1800, following: 900 };

/** Followers or followed accounts: a name ending in _<N> has exactly N (`bench_200000`); others by hash. */
export function relationCount(user: string, relation: keyof typeof RELATION_SPREAD): number {
  const m = /_(\d{1,7})$/.exec(user);
  return m ? Number(m[1]) : hash(`${relation}:${user.toLowerCase()}`) % RELATION_SPREAD[relation];
}

/** The seed of a user's follower or following list: its accounts' handles and fields derive from it. */
export const listSeed = (user: string, relation: string): number => hash(`${relation}:${hash(user.toLowerCase())}`);

export function userId(user: string): string {
  // 19 digits, past 2^53 on purpose: ids must survive as strings.
  return `1${String(hash(`id:${user.toLowerCase()}`)).padStart(10, '0')}${String(hash(`id2:${user}`) % 1e8).padStart(8, '0')}`;
}

/** A plausible handle for the i-th member of a generated list. */
export function handle(seed: number, i: number): string {
  let n = Math.imul(seed ^ (i * 2654435761), 2246822519) >>> 0;
  let name = '';
  for (let k = 0; k < 3; k++) {
    name += SYLLABLES[n & 15];
    n >>>= 4;
  }
  return `${name}_${i}`;
}

/** Seconds between consecutive followers of `user`, so `since` selects a predictable number. */
export function spacingSeconds(user: string, relation: string): number {
  return 60 + (hash(`spacing:${relation}:${user.toLowerCase()}`) % 3540);
}

/** ISO 8601 with microseconds and a +00:00 offset, as the service writes `last_checked`. */
export function isoMicros(epochMs: number, micros: number): string {
  return `${new Date(epochMs).toISOString().slice(0, 19)}.${String(micros).padStart(6, '0')}+00:00`;
}

/**
 * Reads `since` the way the service does (Python's fromisoformat after the 4/7/24 change):
 * a date, or a date-time with optional seconds, fraction and offset; `Z` is UTC; no offset is UTC.
 * Returns epoch ms, or undefined when the text is not an ISO date-time.
 */
export function parseServiceSince(text: string): number | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?(Z|[+-]\d{2}:\d{2})?)?$/.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '0', zone] = m;
  const ms = Date.UTC(+y!, +mo! - 1, +d!, +h, +mi, +s, Math.floor(Number(`0.${frac}`) * 1000));
  const check = new Date(ms);
  if (check.getUTCMonth() !== +mo! - 1 || check.getUTCDate() !== +d! || +h > 23 || +mi > 59 || +s > 59) return undefined;
  if (!zone || zone === 'Z') return ms;
  const sign = zone[0] === '-' ? -1 : 1;
  return ms - sign * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6))) * 60_000;
}
