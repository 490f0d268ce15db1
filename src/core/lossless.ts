// JSON values as the library hands them out, and the lossless pair `parseJson`/`stringifyJson`
// exported from `sgq`. The core keeps each number token JSON.parse would change as a RawNumber
// (json.ts); a user gets an integer past 2^53 as a BigInt (exact, and arithmetic works) and
// every other such token (`1.0`, `-0`, `1E400`, a decimal longer than a double) as a
// LosslessNumber that holds the text. Writing back puts each token out as it came in.
import { RawNumber, parseJson as parseCore, stringifyJson as stringifyCore, type Json } from './json.js';

/**
 * A JSON number kept as its text because a JS number would change it (`1.0`, `-0`, `1E400`,
 * `0.12345678901234567890123`). `valueOf()` gives the nearest JS number, so `+n` and `n > 1`
 * work; `text` and `toString()` give the token; `stringifyJson` writes it back exactly.
 */
export class LosslessNumber extends RawNumber {
  override valueOf(): number {
    return Number(this.text);
  }
}

/** A JSON value: integers past 2^53 are BigInts, other numbers JSON.parse would change LosslessNumbers. */
export type SgqValue = null | boolean | number | bigint | LosslessNumber | string | SgqValue[] | { [key: string]: SgqValue };

/** One JSON object of the service's answers, any field readable as a JSON value. */
export type SgqRecord = { [key: string]: SgqValue | undefined };

// An integer token: a BigInt unless it is -0 (which a BigInt cannot hold).
const INTEGER = /^-?(0|[1-9]\d*)$/;

/** The core's parsed value as the library hands it out. */
export function toSgqValue(value: Json): SgqValue {
  if (value instanceof RawNumber) return INTEGER.test(value.text) && value.text !== '-0' ? BigInt(value.text) : new LosslessNumber(value.text);
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(toSgqValue);
  return toSgqRecord(value);
}

export function toSgqRecord(value: { [key: string]: Json }): { [key: string]: SgqValue } {
  const out: { [key: string]: SgqValue } = {};
  // Defined, not assigned: a `__proto__` key stays a key.
  for (const key of Object.keys(value)) Object.defineProperty(out, key, { value: toSgqValue(value[key]!), enumerable: true, writable: true, configurable: true });
  return out;
}

/** A library value as the core writes it: BigInts as exact integer tokens; undefined fields left out. */
export function toJson(value: SgqValue | undefined): Json {
  if (typeof value === 'bigint') return new RawNumber(value.toString());
  if (value === undefined || value instanceof RawNumber) return value as Json;
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => toJson(v));
  const out: { [key: string]: Json } = {};
  for (const key of Object.keys(value)) {
    const item = (value as SgqRecord)[key];
    if (item !== undefined) Object.defineProperty(out, key, { value: toJson(item), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/**
 * Parses JSON text without changing a number: integers past 2^53 become BigInts, and any other
 * token JSON.parse would change a LosslessNumber. Throws a SyntaxError on text that is not JSON.
 */
export function parseJson(text: string): SgqValue {
  return toSgqValue(parseCore(text));
}

/**
 * JSON text of a value, each BigInt and LosslessNumber written as its exact token: a record
 * parsed by `parseJson` (or fetched by a client) is written back as the service sent it.
 * Undefined fields are left out, as JSON.stringify does.
 */
export function stringifyJson(value: SgqValue | SgqRecord | readonly SgqRecord[]): string {
  return stringifyCore(toJson(value as SgqValue));
}
