import type { Json } from '../../core/json.js';

// What jq 1.8 does with the values of records, for the few operations of the subset of jq that
// sgq answers without jq (jq-subset.ts), and what it prints. Wherever jq's result could differ
// from JavaScript's (a number that is not a safe integer, a string with a lone surrogate, which
// jq reads as U+FFFD, an object with a key that JavaScript orders first, a value jq would fail
// on), the operation gives up (throws Bail) and the page goes to jq itself.

/** Thrown where only jq knows the answer: the page and every later one go to jq. */
export class Bail extends Error {}
const bail = (): never => {
  throw new Bail();
};

/** A filter's lack of result (`select` of a false condition), as jq's `empty`. */
export const EMPTY: unique symbol = Symbol('empty');
export type Result = Json | typeof EMPTY;

/** A plain object (not an array, a RawNumber or another class): its prototype says. */
function isObject(v: Json): v is { [key: string]: Json } {
  if (v === null || typeof v !== 'object') return false;
  const proto = Object.getPrototypeOf(v) as object | null;
  return proto === Object.prototype || proto === null;
}

/** A string jq reads the same: one without lone surrogates. */
export function wellFormed(s: string): string {
  return (s as string & { isWellFormed(): boolean }).isWellFormed() ? s : bail();
}

/** The record, if jq reads it as it is: jq refuses a whole record that holds a lone surrogate anywhere. */
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
  const units = typeof v === 'string' && SURROGATE.test(wellFormed(v)) ? Array.from(v) : undefined;
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

/** `a == b` where both are strings, booleans or null; anything else is jq's to compare. */
export function equal(a: Json, b: Json): boolean {
  const plain = (v: Json) => v === null || typeof v === 'boolean' || (typeof v === 'string' && wellFormed(v) === v);
  return plain(a) && plain(b) ? a === b : bail();
}

/** The string a string builtin works on; jq fails on any other input. */
export const stringInput = (v: Json): string => (typeof v === 'string' ? wellFormed(v) : bail());

/** A pattern `test` can answer: literal characters, maybe anchored by ^ and $, without flags. */
export function literalPattern(pattern: string): ((s: string) => boolean) | undefined {
  const match = /^(\^?)([A-Za-z0-9_ @:/,=-]*)(\$?)$/.exec(pattern);
  if (!match) return undefined;
  const [, start, text, end] = match as unknown as [string, string, string, string];
  // jq's regexes (Oniguruma, Perl syntax) take $ as the end or just before a final newline.
  const atEnd = (s: string) => s.endsWith(text) || s.endsWith(`${text}\n`);
  if (start && end) return (s) => s === text || s === `${text}\n`;
  if (start) return (s) => s.startsWith(text);
  if (end) return atEnd;
  return (s) => s.includes(text);
}

const DEL = /\x7f/g;
/** A string as jq writes it: JSON's escapes, and DEL escaped too. */
const jqString = (s: string): string => JSON.stringify(wellFormed(s)).replace(DEL, '\\u007f');
// JavaScript enumerates keys that look like array indexes first; jq keeps the order they came in.
const INDEX_LIKE = /^[0-9]+$/;

/** A value as `jq -c` writes it; only safe integers among numbers. */
export function printed(v: Json): string {
  if (v === null || v === true || v === false) return String(v);
  if (typeof v === 'string') return jqString(v);
  if (typeof v === 'number') return Number.isSafeInteger(v) && !Object.is(v, -0) ? String(v) : bail();
  if (Array.isArray(v)) return `[${v.map(printed).join(',')}]`;
  if (!isObject(v)) return bail();
  let out = '';
  for (const key in v) {
    if (INDEX_LIKE.test(key)) bail();
    out += `${out ? ',' : ''}${jqString(key)}:${printed(v[key]!)}`;
  }
  return `{${out}}`;
}

/** A result as sgq prints it (jq -r): a string raw, anything else as `jq -c` writes it; a line. */
export const line = (v: Json): string => `${typeof v === 'string' ? wellFormed(v) : printed(v)}\n`;
