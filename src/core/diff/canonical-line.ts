// Whether a record line is already the text sgq would write for it: `stringifyJson(parseJson(line))`
// gives the line back. Then a change can be written from the line's own text, without parsing
// it and writing it again (most of what writing a diff's changes cost: npm run bench, issue 22).
// It is a check of a strict subset of JSON; whatever it is unsure of (whitespace, an escape
// JSON.stringify would not write, a key twice, a key JS objects put first, deep nesting) is
// refused, and the caller takes the long way, which gives the same text or the same error.
//
// Every number token prints back as written: parseJson keeps as text each one JSON.parse
// would change (number-tokens.ts), so any well-formed token passes.

import { NUMBER_TOKEN } from '../number-tokens.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** Nesting past this is left to the parser (which refuses it past MAX_JSON_DEPTH). */
const MAX_DEPTH = 64;

/** Where the value at `at` ends, or -1 when it is not in the subset. */
type Step = (text: string, at: number, depth: number) => number;

/** The escapes JSON.stringify writes itself: \" \\ \b \f \n \r \t, and \u00XX (lowercase) for other controls. */
function escapeEnd(text: string, at: number): number {
  const c = text.charCodeAt(at + 1);
  if (c === QUOTE || c === BACKSLASH || c === 0x62 || c === 0x66 || c === 0x6e || c === 0x72 || c === 0x74) return at + 2;
  if (c !== 0x75 || text.charCodeAt(at + 2) !== 0x30 || text.charCodeAt(at + 3) !== 0x30) return -1;
  const hex = text.slice(at + 4, at + 6);
  if (!/^[01][0-9a-f]$/.test(hex)) return -1;
  const code = parseInt(hex, 16);
  return code === 0x08 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d ? -1 : at + 6;
}

/** Where the string opening at `at` ends (past its quote), or -1. */
function stringEnd(text: string, at: number): number {
  for (let i = at + 1; i < text.length; ) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) return i + 1;
    if (c === BACKSLASH) {
      i = escapeEnd(text, i);
      if (i < 0) return -1;
    } else if (c < 0x20) return -1;
    else if (c >= 0xd800 && c <= 0xdfff) {
      // A pair is written as it is; JSON.stringify escapes a lone surrogate.
      const next = text.charCodeAt(i + 1);
      if (c > 0xdbff || !(next >= 0xdc00 && next <= 0xdfff)) return -1;
      i += 2;
    } else i++;
  }
  return -1;
}

const NUMBER = new RegExp(NUMBER_TOKEN, 'y');

function numberEnd(text: string, at: number): number {
  NUMBER.lastIndex = at;
  return NUMBER.test(text) ? NUMBER.lastIndex : -1;
}

function literalEnd(text: string, at: number): number {
  for (const word of ['true', 'false', 'null']) if (text.startsWith(word, at)) return at + word.length;
  return -1;
}

const valueEnd: Step = (text, at, depth) => {
  const c = text.charCodeAt(at);
  if (c === QUOTE) return stringEnd(text, at);
  if (c === 0x7b) return depth >= MAX_DEPTH ? -1 : objectEnd(text, at, depth + 1);
  if (c === 0x5b) return depth >= MAX_DEPTH ? -1 : arrayEnd(text, at, depth + 1);
  return c === 0x2d || (c >= 0x30 && c <= 0x39) ? numberEnd(text, at) : literalEnd(text, at);
};

function arrayEnd(text: string, at: number, depth: number): number {
  let i = at + 1;
  if (text.charCodeAt(i) === 0x5d) return i + 1;
  for (;;) {
    i = valueEnd(text, i, depth);
    if (i < 0) return -1;
    const c = text.charCodeAt(i);
    if (c === 0x5d) return i + 1;
    if (c !== 0x2c) return -1;
    i++;
  }
}

/** Whether text[at, end) is all digits: a key JS objects put before the others (an array index), whose order stringify would change. */
function allDigits(text: string, at: number, end: number): boolean {
  for (let i = at; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return false;
  }
  return end > at;
}

/** Whether the key at [at, end) is among `keys` (offset pairs): escapes are canonical here, so a same key is the same text. */
function seen(text: string, keys: number[], at: number, end: number): boolean {
  for (let k = 0; k < keys.length; k += 2) if (keys[k + 1]! - keys[k]! === end - at && sameText(text, keys[k]!, at, end - at)) return true;
  return false;
}

function sameText(text: string, a: number, b: number, length: number): boolean {
  for (let i = 0; i < length; i++) if (text.charCodeAt(a + i) !== text.charCodeAt(b + i)) return false;
  return true;
}

/** The object at `at`; where its keys are (offset pairs of their text, quotes included) goes to `keys`. */
function objectEnd(text: string, at: number, depth: number, keys: number[] = []): number {
  let i = at + 1;
  if (text.charCodeAt(i) === 0x7d) return i + 1;
  for (;;) {
    if (text.charCodeAt(i) !== QUOTE) return -1;
    const keyEnd = stringEnd(text, i);
    if (keyEnd < 0 || text.charCodeAt(keyEnd) !== 0x3a) return -1;
    // A key twice: parsing keeps the last.
    if (allDigits(text, i + 1, keyEnd - 1) || seen(text, keys, i, keyEnd)) return -1;
    keys.push(i, keyEnd);
    i = valueEnd(text, keyEnd + 1, depth);
    if (i < 0) return -1;
    const c = text.charCodeAt(i);
    if (c === 0x7d) return i + 1;
    if (c !== 0x2c) return -1;
    i++;
  }
}

/**
 * Whether `line` is a JSON object that sgq writes back as the same text, none of whose keys
 * is one of `taken` (keys sgq puts first, which the record's own would overwrite in place).
 */
export function isCanonicalObject(line: string, taken: readonly string[]): boolean {
  if (line.charCodeAt(0) !== 0x7b) return false;
  const keys: number[] = [];
  if (objectEnd(line, 0, 1, keys) !== line.length) return false;
  return !taken.some((key) => {
    const quoted = JSON.stringify(key);
    for (let k = 0; k < keys.length; k += 2) if (keys[k + 1]! - keys[k]! === quoted.length && line.startsWith(quoted, keys[k]!)) return true;
    return false;
  });
}
