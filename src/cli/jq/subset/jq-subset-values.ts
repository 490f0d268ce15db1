import type { Json } from '../../../core/json.js';

// What jq 1.8 does with the values of records, for the few operations of the subset of jq that
// sgq answers without jq (jq-subset.ts), and what it prints. Wherever jq's result could differ
// from JavaScript's (a number that is not a safe integer, a string with a lone surrogate, which
// jq reads as U+FFFD, an object with a key that JavaScript orders first, a value jq would fail
// on), the operation gives up (throws Bail) and the page goes to jq itself.

/** Thrown where only jq knows the answer: the page and every later one go to jq. */
export class Bail extends Error {}
export const bail = (): never => {
  throw new Bail();
};

/** A filter's lack of result (`select` of a false condition), as jq's `empty`. */
export const EMPTY: unique symbol = Symbol('empty');
export type Result = Json | typeof EMPTY;

/** A plain object (not an array, a RawNumber or another class): its prototype says. */
export function isObject(v: Json): v is { [key: string]: Json } {
  if (v === null || typeof v !== 'object') return false;
  const proto = Object.getPrototypeOf(v) as object | null;
  return proto === Object.prototype || proto === null;
}

/** A string jq reads the same: one without lone surrogates. */
function wellFormed(s: string): string {
  return (s as string & { isWellFormed(): boolean }).isWellFormed() ? s : bail();
}

/**
 * The record, if jq reads it as it is: jq refuses a whole record that holds a lone surrogate
 * anywhere. Every string the subset then works on is well-formed (the filter's own literals
 * are checked by its lexer), and every operation keeps it so: none checks again.
 */
export function readable(v: Json): Json {
  if (typeof v === 'string') wellFormed(v);
  else if (Array.isArray(v)) v.forEach(readable);
  else if (isObject(v)) {
    for (const key in v) {
      wellFormed(key);
      readable(v[key]!);
    }
  }
  return v;
}

/** `.name` of a value: null for null or a missing key. */
export function field(v: Json, name: string): Json {
  if (v === null) return null;
  if (!isObject(v)) return bail(); // jq: cannot index
  return Object.hasOwn(v, name) ? v[name]! : null;
}

const SURROGATE = /[\ud800-\udfff]/;

/** `.[from:to]` of a string (by code points, as jq counts), an array, or null. */
export function slice(v: Json, from: number | undefined, to: number | undefined): Json {
  if (v === null) return null;
  const units = typeof v === 'string' && SURROGATE.test(v) ? Array.from(v) : undefined;
  const length = units ? units.length : typeof v === 'string' || Array.isArray(v) ? v.length : bail();
  // jq's clamping (parse_slice): negative counts from the end, then into [0, length], end ≥ start.
  let start = from ?? 0;
  let end = to ?? length;
  if (start < 0) start += length;
  if (end < 0) end += length;
  start = Math.min(Math.max(start, 0), length);
  end = Math.max(Math.min(end, length), start);
  if (units) return units.slice(start, end).join('');
  return (v as string | Json[]).slice(start, end);
}

/** jq's truthiness: everything but false and null. */
export const truthy = (v: Json): boolean => v !== null && v !== false;

/** A number the subset computes with: a safe integer, where jq's doubles and decimals agree. */
export const exact = (v: number): number => (Number.isSafeInteger(v) && !Object.is(v, -0) ? v : bail());

/** jq orders values by kind first: null < false < true < numbers < strings; arrays and objects are left to jq. */
function kind(v: Json): number {
  if (v === null) return 0;
  if (typeof v === 'boolean') return v ? 2 : 1;
  if (typeof v === 'number') return 3;
  return typeof v === 'string' ? 4 : bail();
}

// JavaScript compares strings by UTF-16 units, jq by UTF-8 bytes (code points): a unit of a
// surrogate pair (an astral character) must sort after U+E000-U+FFFF, as its bytes do.
const byCodePoint = (unit: number): number => (unit < 0xd800 ? unit : unit < 0xe000 ? unit + 0x2000 : unit - 0x800);

/** jq's order of two strings (string_cmp: bytes, then length). */
function compareStrings(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return byCodePoint(x) - byCodePoint(y);
  }
  return a.length - b.length;
}

/** jq's order of two values (jv_cmp), for null, booleans, safe integers and strings; anything else is jq's. */
export function compare(a: Json, b: Json): number {
  const k = kind(a) - kind(b);
  if (k !== 0) return k;
  if (typeof a === 'number') return exact(a) - exact(b as number);
  return typeof a === 'string' ? compareStrings(a, b as string) : 0;
}

/** `length`: code points of a string, items of an array, keys of an object, 0 for null, |n| of a number; jq fails on a boolean. */
export function length(v: Json): Json {
  if (v === null) return 0;
  if (typeof v === 'string') return v.length - (v.match(HIGH_SURROGATES)?.length ?? 0);
  if (typeof v === 'number') return Math.abs(exact(v));
  if (Array.isArray(v)) return v.length;
  return isObject(v) ? Object.keys(v).length : bail();
}
const HIGH_SURROGATES = /[\ud800-\udbff]/g;

/** `has("key")` of an object; jq fails on anything else (an array takes a number: jq's). */
export function has(v: Json, key: string): boolean {
  return isObject(v) ? Object.hasOwn(v, key) : bail();
}

/** `ascii_downcase` and `ascii_upcase`: only A-Z and a-z change. */
export const asciiCase = (upper: boolean) => (v: Json): string =>
  upper ? stringInput(v).replace(/[a-z]+/g, (m) => m.toUpperCase()) : stringInput(v).replace(/[A-Z]+/g, (m) => m.toLowerCase());

/** The string a string builtin works on; jq fails on any other input. */
export const stringInput = (v: Json): string => (typeof v === 'string' ? v : bail());

/** `split("separator")` of a string: jq gives no parts of "", and its characters for an empty separator. */
export function split(s: string, separator: string): string[] {
  if (s === '') return [];
  return separator === '' ? Array.from(s) : s.split(separator);
}
