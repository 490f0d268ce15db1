import type { JsonObject } from '../classify.js';
import { parseJson, stringifyJson } from '../json.js';
import { isCanonicalObject } from './canonical-line.js';
import type { Change } from './merge-diff.js';

// A diff's changes as sgq prints them. In core, not with the rest of the CLI's text, because
// the worker thread of a hash diff writes the NDJSON lines of its own changes (change-order.ts).

/**
 * A change as printed: `{"change": …, …the record}`, with the record's numbers kept exact.
 * Matched by id (`renames`), every change carries `renamed_from` (the older username of a
 * renamed account, null otherwise), so that CSV, TSV and Parquet get the column from the start.
 */
export const changeRecords = (changes: readonly Change[], renames = false): JsonObject[] =>
  changes.map((c) => (renames ? { change: c.change, renamed_from: c.from ?? null, ...(parseJson(c.line) as JsonObject) } : { change: c.change, ...(parseJson(c.line) as JsonObject) }));

const FIRST = { plain: ['change'], renames: ['change', 'renamed_from'] };

/**
 * The NDJSON line of a change (its newline included): the text `stringifyJson` makes of its
 * change record, written from the record line's own text when that is already the text sgq
 * would write. Throws what parsing the line throws.
 */
export function changeLine(c: Change, renames = false): string {
  if (!isCanonicalObject(c.line, renames ? FIRST.renames : FIRST.plain)) return `${stringifyJson(changeRecords([c], renames)[0]!)}\n`;
  const head = renames ? `{"change":"${c.change}","renamed_from":${c.from === undefined ? 'null' : JSON.stringify(c.from)}` : `{"change":"${c.change}"`;
  return c.line === '{}' ? `${head}}\n` : `${head},${c.line.slice(1)}\n`;
}

/** The NDJSON lines of changes (changeLine). */
export function changeLines(changes: readonly Change[], renames = false): string {
  let out = '';
  for (const c of changes) out += changeLine(c, renames);
  return out;
}
