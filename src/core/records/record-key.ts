import { JsonTooDeep, stringifyJson, parseJson } from '../json.js';

/** The key of a record line (the field chosen to identify accounts), as text. */
export type KeyOf = (line: string) => string | undefined;

export class NotARecord extends Error {}

/** A canonical JSON integer: read as its text, it is the text the parser would give back too. */
const INTEGER = /^(?:0|-?[1-9]\d*)$/;
/** The lookup could not decide on the text alone: parse the line. */
const PARSE = Symbol('parse');

/**
 * Reads `key` from a JSON line, as text: a string as it is, a number as the exact digits the
 * service sent (an id past 2^53 stays exact: never a JS number). Most lines are read without
 * parsing (see `readFlat`); the others are parsed, keeping big integers exact.
 */
export function keyReader(key: string): KeyOf {
  const quoted = JSON.stringify(key);
  const first = `{${quoted}:"`;
  const anywhere = `${quoted}:`;
  return (line) => {
    // The common case of the spec's records: `username` first, a plain string.
    if (line.startsWith(first)) {
      const end = line.indexOf('"', first.length);
      const value = line.slice(first.length, end);
      if (end > 0 && !value.includes('\\')) return value;
    }
    const fast = readFlat(line, anywhere);
    return fast === PARSE ? parsedKey(line, key) : fast;
  };
}

/**
 * The value of `"key":` in a flat record line (no `{` after the first character), without
 * parsing. Sound because in JSON text every `"` inside a string is escaped: a `"key":`
 * preceded by `{` or `,` can only be a key of the outer object when no object is nested.
 * The last one wins, as with JSON.parse. Anything unusual (spaces, escapes, other number
 * forms, nesting) is left to the parser.
 */
function readFlat(line: string, anywhere: string): string | undefined | typeof PARSE {
  const at = line.lastIndexOf(anywhere);
  if (at <= 0 || line.indexOf('{', 1) !== -1) return PARSE;
  const before = line.charCodeAt(at - 1);
  if (before !== 0x2c /* , */ && !(before === 0x7b /* { */ && at === 1)) return PARSE;
  const start = at + anywhere.length;
  if (line.charCodeAt(start) === 0x22 /* " */) {
    const end = line.indexOf('"', start + 1);
    const value = line.slice(start + 1, end);
    return end < 0 || value.includes('\\') ? PARSE : value;
  }
  let end = start;
  while (end < line.length && line[end] !== ',' && line[end] !== '}') end++;
  const token = line.slice(start, end);
  if (token === 'null') return undefined;
  return INTEGER.test(token) ? token : PARSE;
}

function parsedKey(line: string, key: string): string | undefined {
  return recordKey(parseRecord(line), key);
}

/**
 * `key` of a record already parsed, as `keyReader` reads it from the record's line (the text
 * stringifyJson writes of it): a string as it is, anything else as its JSON text (a RawNumber's
 * digits as sent); undefined when it is missing or null.
 */
export function recordKey(record: Record<string, unknown>, key: string): string | undefined {
  const value = record[key];
  if (value === undefined || value === null) return undefined;
  return typeof value === 'string' ? value : stringifyJson(value as never);
}

/** A record line as an object; NotARecord when it is not JSON or not an object. */
export function parseRecord(line: string): Record<string, unknown> {
  let record;
  try {
    record = parseJson(line);
  } catch (error) {
    throw new NotARecord(error instanceof JsonTooDeep ? `a record is ${error.message}` : `not JSON: ${line.slice(0, 60)}`);
  }
  if (record === null || typeof record !== 'object' || Array.isArray(record)) throw new NotARecord(`not a JSON object: ${line.slice(0, 60)}`);
  return record as Record<string, unknown>;
}
