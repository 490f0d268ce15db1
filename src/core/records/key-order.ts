import type { Keyed } from './keyed.js';

// The one order of keyed lines: their keys as strings (UTF-16 units, so '10' before '9'),
// equal keys in arrival order. A snapshot's file, the merge and the held diff all rely on it.
// Sorting with a JS comparator cost about 0.9 ms per 1,000 lines (some 1.9 s of the main
// thread in a 2,000-account nightly job): keys of decimal digits (the service's ids) are
// instead turned into numbers that sort the same and sorted by V8's native typed-array sort.

/** Up to 2^18 lines are sorted by the numeric path: the line's index takes the low 18 bits. */
const INDEX_BITS = 2 ** 18;
/** Digits read per number: 10 base-11 digits stay below 2^35, and 2^35 × 2^18 below 2^53. */
const HALF = 10;

/** Sorts by key in place, stably (equal keys stay in arrival order); returns `items`. */
export function sortKeyed(items: Keyed[]): Keyed[] {
  const order = items.length > 1 ? decimalOrder(items.map((item) => item.key)) : undefined;
  if (!order) return items.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const copy = items.slice();
  for (let i = 0; i < order.length; i++) items[i] = copy[order[i]!]!;
  return items;
}

/** Where each key goes in that order (the index of the key at each place), stably: what sortKeyed does, for keys held apart from their lines (line-bytes.ts). */
export function keyOrder(keys: readonly string[]): Int32Array {
  const order = keys.length > 1 ? decimalOrder(keys) : undefined;
  if (order) return order;
  return Int32Array.from(keys.keys()).sort((a, b) => (keys[a]! < keys[b]! ? -1 : keys[a]! > keys[b]! ? 1 : a - b));
}

/**
 * Where each key goes (the index of the key at each place), when every key is at most 20
 * decimal digits and there are under 2^18 keys; undefined otherwise. A key read as base 11
 * (a digit d as d+1, the places past its end as 0: a prefix sorts first) keeps the strings'
 * order; its first ten places and the key's index make one exact double, sorted natively;
 * items whose first ten places are equal are then ordered by the last ten, then by index.
 */
export function decimalOrder(keys: readonly string[]): Int32Array | undefined {
  const n = keys.length;
  if (n >= INDEX_BITS) return undefined;
  const high = new Float64Array(n);
  const low = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const key = keys[i]!;
    if (key.length > 2 * HALF) return undefined;
    const h = places(key, 0);
    const l = places(key, HALF);
    if (h < 0 || l < 0) return undefined;
    high[i] = h * INDEX_BITS + i;
    low[i] = l;
  }
  high.sort();
  return settleTies(high, low);
}

/** The key's places [from, from + 10) as a base-11 number; -1 when one is not a digit. */
function places(key: string, from: number): number {
  let value = 0;
  for (let p = from; p < from + HALF; p++) {
    let digit = 0;
    if (p < key.length) {
      digit = key.charCodeAt(p) - 47;
      if (digit < 1 || digit > 10) return -1;
    }
    value = value * 11 + digit;
  }
  return value;
}

/** The indexes in `sorted` (high places × 2^18 + index, ascending), runs of equal high places ordered by `low`, then index. */
function settleTies(sorted: Float64Array, low: Float64Array): Int32Array {
  const n = sorted.length;
  const order = new Int32Array(n);
  for (let i = 0; i < n; ) {
    const high = Math.floor(sorted[i]! / INDEX_BITS);
    let j = i + 1;
    while (j < n && Math.floor(sorted[j]! / INDEX_BITS) === high) j++;
    for (let x = i; x < j; x++) order[x] = sorted[x]! - high * INDEX_BITS;
    if (j - i > 1) order.subarray(i, j).sort((a, b) => low[a]! - low[b]! || a - b);
    i = j;
  }
  return order;
}
