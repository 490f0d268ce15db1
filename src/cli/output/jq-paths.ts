import type { JsonObject } from '../../core/classify.js';

// The commonest --jq filter names a field (`.username`, `.user.screen_name`). Over records whose
// field holds a string, a boolean or null, what jq prints is known without jq: the string raw,
// the others as their words. Such pages are written directly; any other value (a number, whose
// text jq 1.8 keeps as sent, an object, an array, a path through a non-object, which jq reports
// as an error) sends the page, and every page after it, to jq itself.

const PATH = /^\s*((?:\.[A-Za-z_][A-Za-z0-9_]*)+)\s*$/;

/** The names of a filter that is only a path of plain names, else undefined. */
export function fieldPath(filter: string): string[] | undefined {
  const match = PATH.exec(filter);
  return match ? match[1]!.slice(1).split('.') : undefined;
}

/** What `jq -r PATH` prints for these records, or undefined when a value needs jq itself. */
export function pathLines(records: readonly JsonObject[], path: readonly string[]): string | undefined {
  let out = '';
  for (const record of records) {
    let value: unknown = record;
    for (const name of path) {
      if (value === null) break; // null | .name is null
      if (typeof value !== 'object' || Array.isArray(value) || Object.getPrototypeOf(value) !== Object.prototype) return undefined;
      value = Object.hasOwn(value, name) ? (value as Record<string, unknown>)[name] : null;
    }
    if (typeof value === 'string') out += `${value}\n`;
    else if (value === null || value === true || value === false) out += `${String(value)}\n`;
    else return undefined;
  }
  return out;
}
