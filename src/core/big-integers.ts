// `--bigint-as-string`: integers past ±2^53 written as JSON strings of their digits. A reader that
// reads every number as a double (jq 1.6, as Debian 12 and Ubuntu 22.04 ship it; JavaScript's
// JSON.parse) changes them silently: …600000001 prints as …600000000. sgq keeps such tokens as
// RawNumbers (json.ts), so only those are looked at.
import type { JsonObject } from './classify.js';
import { RawNumber, type Json } from './json.js';

const INTEGER = /^-?(0|[1-9]\d*)$/;
const LIMIT = 2n ** 53n;

/** Whether a number token is an integer past ±2^53, which a double cannot hold. */
export function beyondDouble(token: string): boolean {
  if (!INTEGER.test(token)) return false;
  const digits = token.length - (token.startsWith('-') ? 1 : 0);
  // 2^53 has 16 digits: fewer are within it, more are past it.
  if (digits !== 16) return digits > 16;
  const value = BigInt(token);
  return value > LIMIT || value < -LIMIT;
}

/** The value with each such integer a string; the value itself when it holds none (nothing is changed in place). */
function converted(value: Json): Json {
  if (value instanceof RawNumber) return beyondDouble(value.text) ? value.text : value;
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    let out: Json[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item = converted(value[i]!);
      if (item !== value[i]) (out ??= value.slice())[i] = item;
    }
    return out ?? value;
  }
  let out: JsonObject | undefined;
  for (const key of Object.keys(value)) {
    const item = converted(value[key]!);
    // A spread defines its keys, as JSON.parse does: a `__proto__` key stays a key.
    if (item !== value[key]) (out ??= { ...value })[key] = item;
  }
  return out ?? value;
}

/** A record with its integers past ±2^53 as strings of their digits, at any depth. */
export function bigIntegersAsStrings(record: JsonObject): JsonObject {
  return converted(record) as JsonObject;
}
