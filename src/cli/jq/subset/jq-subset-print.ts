import type { Json } from '../../../core/json.js';
import { bail, exact, isObject } from './jq-subset-values.js';

// What jq 1.8 writes for a value, for the subset of jq that sgq answers itself: `jq -c`'s text,
// `tostring` (and what a string interpolation inserts), and the rows of `@csv` and `@tsv`.
// Where sgq cannot be sure to write what jq writes (a number other than a safe integer, a key
// JavaScript would move), it gives up (bail) and jq answers.

const DEL = /\x7f/g;
/** A string as jq writes it: JSON's escapes, and DEL escaped too. */
const jqString = (s: string): string => {
  const json = JSON.stringify(s);
  return json.includes('\x7f') ? json.replace(DEL, '\\u007f') : json;
};
// JavaScript enumerates keys that look like array indexes first; jq keeps the order they came in.
const INDEX_LIKE = /^[0-9]+$/;

// Records repeat their keys: each key's `"key":` is worked out once (a bounded memo).
const keyTexts = new Map<string, string>();
function keyText(key: string): string {
  let text = keyTexts.get(key);
  if (text === undefined) {
    if (INDEX_LIKE.test(key)) bail();
    if (keyTexts.size >= 4096) keyTexts.clear();
    keyTexts.set(key, (text = `${jqString(key)}:`));
  }
  return text;
}

/** A value as `jq -c` writes it (and `@json`, `tojson`); only safe integers among numbers. */
export function printed(v: Json): string {
  if (v === null || v === true || v === false) return String(v);
  if (typeof v === 'string') return jqString(v);
  if (typeof v === 'number') return String(exact(v));
  if (Array.isArray(v)) return `[${v.map(printed).join(',')}]`;
  if (!isObject(v)) return bail();
  let out = '{';
  for (const key in v) out += `${out.length > 1 ? ',' : ''}${keyText(key)}${printed(v[key]!)}`;
  return `${out}}`;
}

/** `tostring`, `@text`, and what `"\(x)"` inserts: a string as it is, anything else as `jq -c` writes it. */
export const text = (v: Json): string => (typeof v === 'string' ? v : printed(v));

/** A result as sgq prints it (jq -r): a string raw, anything else as `jq -c` writes it; a line. */
export const line = (v: Json): string => `${text(v)}\n`;

// jq's escape_string: a NUL becomes \0 in every format that escapes (csv and tsv here).
const TSV_ESCAPES: Record<string, string> = { '\t': '\\t', '\r': '\\r', '\n': '\\n', '\\': '\\\\', '\0': '\\0' };
const CSV_ESCAPES: Record<string, string> = { '"': '""', '\0': '\\0' };

/** A cell of `@csv` or `@tsv`: null is empty, a string quoted (csv) or escaped (tsv); an array or object is jq's error. */
function cell(v: Json, tsv: boolean): string {
  if (v === null) return '';
  if (typeof v === 'string') return tsv ? v.replace(/[\t\r\n\\\0]/g, (c) => TSV_ESCAPES[c]!) : `"${v.replace(/["\0]/g, (c) => CSV_ESCAPES[c]!)}"`;
  return typeof v === 'object' ? bail() : printed(v);
}

/** `@csv` or `@tsv` of an array; jq fails on anything else. */
export const row = (tsv: boolean) => (v: Json): string => (Array.isArray(v) ? v.map((x) => cell(x, tsv)).join(tsv ? '\t' : ',') : bail());
