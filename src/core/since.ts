import { usageError } from './errors.js';

// `--since` accepts an ISO 8601 date-time or a relative age, and is always sent as an ISO
// string in UTC with a `+00:00` offset (spec §4.1 rule 3: `Z` and `+00:00` are the same
// instant; the offset form is also read by servers that predate the `Z` change).

const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(Z|z|[+-]\d{2}(?::?\d{2})?)?)?$/;
const RELATIVE = /^(\d+(?:\.\d+)?)\s*(s|m|h|d|w)$/i;
const UNIT_MS: Record<string, number> = { s: 1e3, m: 60e3, h: 3600e3, d: 86400e3, w: 7 * 86400e3 };

const HINT = 'use an ISO 8601 date-time such as 2024-04-07T12:00:00Z, or an age such as 90m, 24h or 7d';

/** An age or a duration such as `90s`, `5m`, `24h`, `7d`, `2w`, in ms; undefined if it is not one. */
export function durationMs(text: string): number | undefined {
  const relative = RELATIVE.exec(text.trim());
  return relative ? Number(relative[1]) * UNIT_MS[relative[2]!.toLowerCase()]! : undefined;
}

// The years an ISO date-time can spell with four digits (and Python's datetime reads).
const EARLIEST = new Date(Date.UTC(2000, 0, 1)).setUTCFullYear(1);
const LATEST = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** Returns the `since` value to send, e.g. `2024-04-07T10:00:00.000000+00:00`. */
export function parseSince(input: string, now: Date = new Date()): string {
  const text = input.trim();
  const ms = durationMs(text);
  if (ms !== undefined) return formatUtc(inRange(now.getTime() - ms, input), 0);
  const m = ISO.exec(text);
  if (!m) throw usageError(`invalid since ${JSON.stringify(input)}`, HINT, { option: 'since' });
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '', zone] = m;
  const fields = [Number(y), Number(mo), Number(d), Number(h), Number(mi), Number(s)] as const;
  // setUTCFullYear, because Date.UTC reads years 0 to 99 as 1900 to 1999.
  const local = new Date(Date.UTC(2000, fields[1] - 1, fields[2], fields[3], fields[4], fields[5])).setUTCFullYear(fields[0]);
  const back = new Date(local);
  // Date.UTC rolls 2024-02-30 over to March; a date that does not survive the trip is invalid.
  if (
    back.getUTCFullYear() !== fields[0] ||
    back.getUTCMonth() !== fields[1] - 1 ||
    back.getUTCDate() !== fields[2] ||
    fields[3] > 23 ||
    fields[4] > 59 ||
    fields[5] > 59
  ) {
    throw usageError(`invalid since ${JSON.stringify(input)}: no such date or time`, HINT, { option: 'since' });
  }
  const offsetMinutes = parseOffset(zone);
  if (offsetMinutes === undefined) throw usageError(`invalid since ${JSON.stringify(input)}: bad UTC offset`, HINT, { option: 'since' });
  const micros = (frac + '000000').slice(0, 6);
  return formatUtc(inRange(local - offsetMinutes * 60e3, input), Number(micros.slice(3)), micros.slice(0, 3));
}

function inRange(epochMs: number, input: string): number {
  if (!(epochMs >= EARLIEST && epochMs <= LATEST)) {
    throw usageError(`since ${JSON.stringify(input)} is out of range: it must fall in the years 0001 to 9999`, HINT, { option: 'since' });
  }
  return epochMs;
}

/** Minutes east of UTC; no zone means UTC. */
function parseOffset(zone: string | undefined): number | undefined {
  if (!zone || zone === 'Z' || zone === 'z') return 0;
  const m = /^([+-])(\d{2}):?(\d{2})?$/.exec(zone);
  if (!m) return undefined;
  const hours = Number(m[2]);
  const minutes = Number(m[3] ?? '0');
  if (hours > 23 || minutes > 59) return undefined;
  return (m[1] === '-' ? -1 : 1) * (hours * 60 + minutes);
}

function formatUtc(epochMs: number, extraMicros: number, millisText?: string): string {
  const iso = new Date(epochMs).toISOString(); // 2024-04-07T10:00:00.000Z
  const millis = millisText ?? iso.slice(20, 23);
  return `${iso.slice(0, 19)}.${millis}${String(extraMicros).padStart(3, '0')}+00:00`;
}
