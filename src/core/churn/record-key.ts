import { JsonTooDeep, stringifyJson, parseJson } from '../json.js';

/** The key of a record line (`username` unless --key names another field), as text. */
export type KeyOf = (line: string) => string | undefined;

export class NotARecord extends Error {}

/**
 * Reads `key` from a JSON line. When the key is the record's first field and its value a
 * plain string (the common case: the service sends `username` first), it is read without
 * parsing the line; otherwise the line is parsed, keeping big integers exact.
 */
export function keyReader(key: string): KeyOf {
  const prefix = `{${JSON.stringify(key)}:"`;
  return (line) => {
    if (line.startsWith(prefix)) {
      const end = line.indexOf('"', prefix.length);
      const value = line.slice(prefix.length, end);
      if (end > 0 && !value.includes('\\')) return value;
    }
    let record;
    try {
      record = parseJson(line);
    } catch (error) {
      throw new NotARecord(error instanceof JsonTooDeep ? `a record is ${error.message}` : `not JSON: ${line.slice(0, 60)}`);
    }
    if (record === null || typeof record !== 'object' || Array.isArray(record)) throw new NotARecord(`not a JSON object: ${line.slice(0, 60)}`);
    const value = (record as Record<string, unknown>)[key];
    if (value === undefined || value === null) return undefined;
    return typeof value === 'string' ? value : stringifyJson(value as never);
  };
}
