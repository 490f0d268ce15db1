import { usageError } from '../../core/errors.js';
import { parseSince } from '../../core/since.js';

// The instants that choose snapshots (`sgq diff --at`, `sgq history --since/--until`): an
// ISO 8601 date or date-time, or an age such as 7d; a date alone means its start, or its end
// (UTC) where the option bounds a period from above. Compared with a snapshot's `taken_at`.

/** The instant `text` names, as an ISO string in UTC (as `taken_at` is written). */
export function instantOf(text: string, now: Date, option: string, { endOfDay }: { endOfDay: boolean }): string {
  let at: string;
  try {
    at = new Date(Date.parse(parseSince(text, now))).toISOString();
  } catch {
    throw usageError(`invalid ${option} ${JSON.stringify(text)}`, 'use an ISO 8601 date or date-time (2026-11-20, 2026-11-20T03:00:00Z) or an age such as 7d');
  }
  return endOfDay && /^\d{4}-\d{2}-\d{2}$/.test(text.trim()) ? new Date(Date.parse(at) + 86_400_000 - 1).toISOString() : at;
}
