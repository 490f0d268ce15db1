// Followers that come, go and flicker with the sandbox's clock (`sgq sandbox --churn RATE`).
// A list is a stream of arrivals: account `a` of a list arrives at a time of its own, stays for
// a lifetime of its own, and is missing now and then for one UTC day (a flicker, as lists from
// a service do). All of it derives from the list's seed (the user's name) and the account's
// index, so the list at a given clock time is the same on every call and in every process,
// with no state: two snapshots taken at different clock times differ by who came, who left and
// who flickered, and the pages of one clock time always agree with each other.

import { listSeed, relationCount } from './data.js';

const DAY_MS = 86_400_000;

/** The members of a list at one clock time, newest arrival first. */
export interface ChurnedList {
  /** Each member's account index (its handle, id and fields derive from it). */
  readonly index: readonly number[];
  /** Each member's arrival time (epoch ms): its `last_checked`, decreasing. */
  readonly at: readonly number[];
}

/** MurmurHash3's finaliser: every input bit moves every output bit, so neighbouring accounts are unrelated. */
function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** A 0..1 fraction from a list's seed, an account (an index past 2^32 too) and a salt. */
const unit = (seed: number, a: number, salt: number): number => fmix(fmix(fmix(seed + Math.imul(salt, 0x9e3779b9)) ^ (a >>> 0)) ^ Math.floor(a / 4294967296)) / 4294967296;

/** What a fraction decides: when an account arrives within its slot, how long it stays, whether it is missing on a day. */
const ARRIVAL = 1;
const STAY = 2;
const missingOn = (day: number): number => day * 4 + 3;

/**
 * The list of `size` accounts on average (the user's usual count) whose `rate` leave each day
 * (and as many come), with about `rate` more missing for that UTC day only. Arrivals are
 * spaced `gap` apart on average and stay up to 2·size·gap, so about `size` are in at any time;
 * an account is in when it has arrived, has not left, and is not flickering today.
 */
function membersAt(seed: number, size: number, rate: number, nowMs: number): ChurnedList {
  const index: number[] = [];
  const at: number[] = [];
  if (size <= 0 || rate <= 0) return { index, at };
  const gap = Math.max(1, DAY_MS / (rate * size));
  const longest = 2 * size * gap;
  const today = Math.floor(nowMs / DAY_MS);
  const newest = Math.floor(nowMs / gap);
  const oldest = Math.floor((nowMs - longest) / gap) - 1;
  for (let a = newest; a >= oldest; a--) {
    const arrived = Math.floor((a + unit(seed, a, ARRIVAL)) * gap);
    if (arrived > nowMs || arrived + unit(seed, a, STAY) * longest <= nowMs) continue;
    if (unit(seed, a, missingOn(today)) < rate) continue;
    index.push(a);
    at.push(arrived);
  }
  return { index, at };
}

/** The lists computed lately: an export asks for the same list page after page. */
const recent = new Map<string, ChurnedList>();
const RECENT = 8;

/** The members of a list at `nowMs` (see membersAt), from the few kept when it was just asked. */
export function churnedList(seed: number, size: number, rate: number, nowMs: number): ChurnedList {
  const key = `${seed}:${size}:${rate}:${nowMs}`;
  let list = recent.get(key);
  if (!list) {
    list = membersAt(seed, size, rate, nowMs);
    if (recent.size >= RECENT) recent.delete(recent.keys().next().value!);
    recent.set(key, list);
  }
  return list;
}

/** How many members arrived at or after `sinceMs` (the list is newest first). */
export function arrivedSince(list: ChurnedList, sinceMs: number): number {
  let lo = 0;
  let hi = list.at.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list.at[mid]! >= sinceMs) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** How many followers (or followed accounts) `user` has at `nowMs`: its usual count, or with churn that of its list then. */
export function listSize(user: string, relation: 'followers' | 'following', nowMs: number, churn: number): number {
  const size = relationCount(user, relation);
  return churn > 0 ? churnedList(listSeed(user, relation), size, churn, nowMs).index.length : size;
}
