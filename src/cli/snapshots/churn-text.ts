import type { JsonObject } from '../../core/classify.js';
import { parseJson, stringifyJson } from '../../core/json.js';
import { isCanonicalObject, type Change, type DiffCounts, type KeyStats } from '../../core/diff/diff.js';
import { count, grouped } from '../../core/words.js';

/** The fields a change carries beside its record, besides `renamed_from`. */
export interface ChangeFields {
  /** --confirm-lost N > 1: `last_seen`, when the snapshot that last held a lost account was taken. */
  lastSeen?: boolean;
  /**
   * --full-every N > 1: `left_after` and `left_before`, the window a lost account left in: the
   * last whole snapshot that held it (or the partial one where it came, after that one;
   * `after` where the change does not say), and the whole snapshot that found it gone.
   */
  window?: { after: string; before: string };
}

/**
 * A change as printed: `{"change": …, …the record}`, with the record's numbers kept exact.
 * Matched by id (`renames`), every change carries `renamed_from` (the older username of a
 * renamed account, null otherwise), under --confirm-lost N > 1 `last_seen`, and under
 * --full-every N > 1 `left_after` and `left_before` (null unless lost), so that CSV, TSV and
 * Parquet get the columns from the start.
 */
export const changeRecords = (changes: readonly Change[], renames = false, fields: ChangeFields = {}): JsonObject[] =>
  changes.map((c) => ({
    change: c.change,
    ...(renames ? { renamed_from: c.from ?? null } : {}),
    ...(fields.lastSeen ? { last_seen: c.lastSeen ?? null } : {}),
    ...(fields.window ? leftWindow(c, fields.window) : {}),
    ...(parseJson(c.line) as JsonObject),
  }));

const leftWindow = (c: Change, window: { after: string; before: string }): JsonObject =>
  c.change === 'lost' ? { left_after: c.lastSeen ?? window.after, left_before: window.before } : { left_after: null, left_before: null };

const FIRST = { plain: ['change'], renames: ['change', 'renamed_from'] };

/**
 * The NDJSON lines of changes: each the text `stringifyJson` makes of its change record,
 * written from the record line's own text when that is already the text sgq would write.
 */
export function changeLines(changes: readonly Change[], renames = false): string {
  let out = '';
  for (const c of changes) {
    if (!isCanonicalObject(c.line, renames ? FIRST.renames : FIRST.plain)) {
      out += `${stringifyJson(changeRecords([c], renames)[0]!)}\n`;
      continue;
    }
    const head = renames ? `{"change":"${c.change}","renamed_from":${c.from === undefined ? 'null' : JSON.stringify(c.from)}` : `{"change":"${c.change}"`;
    out += c.line === '{}' ? `${head}}\n` : `${head},${c.line.slice(1)}\n`;
  }
  return out;
}

/** `12 gained, 3 lost, 985 unchanged`, with `renamed` when matched by id and `changed` when it was asked for. */
export function countsText(counts: DiffCounts, options: { changed: boolean; renames: boolean }): string {
  const parts = [`${grouped(counts.gained)} gained`, `${grouped(counts.lost)} lost`];
  if (options.renames) parts.push(`${grouped(counts.renamed)} renamed`);
  if (options.changed) parts.push(`${grouped(counts.changed)} changed`);
  parts.push(`${grouped(counts.unchanged)} unchanged`);
  return parts.join(', ');
}

/** What keying left out, for a warning; undefined when nothing was. */
export function leftOutText(stats: KeyStats, key: string, where: string): string | undefined {
  const parts: string[] = [];
  if (stats.missingKey) parts.push(`${count(stats.missingKey, 'record')} without "${key}" left out`);
  if (stats.duplicates) parts.push(`${grouped(stats.duplicates)} repeated "${key}" counted once`);
  return parts.length ? `${where}: ${parts.join('; ')}` : undefined;
}
