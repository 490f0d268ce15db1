// The microseconds of an ISO 8601 date-time, for Parquet's TIMESTAMP columns. Called for every
// value of such a column (two per record in the dataset: last_checked and fetched_at), so it
// reads the text by hand, allocates nothing but the result, counts days by arithmetic rather
// than through a Date. A column remembers its last text (timestampReader): fetched_at is one
// text per run.

/** The number written by the ASCII digits of text[from, from + count), or -1 if one is not a digit. */
function digitsAt(text: string, from: number, count: number): number {
  let value = 0;
  for (let i = from; i < from + count; i++) {
    const digit = text.charCodeAt(i) - 0x30;
    if (!(digit >= 0 && digit <= 9)) return -1; // NaN past the end too
    value = value * 10 + digit;
  }
  return value;
}

/** The zone's offset in minutes (`Z`, `+HH:MM`, `-HH:MM` ending the text at `at`), or undefined. */
function zoneMinutes(text: string, at: number): number | undefined {
  if (at === text.length - 1 && text.charCodeAt(at) === 0x5a /* Z */) return 0;
  const sign = text.charCodeAt(at);
  if (at !== text.length - 6 || (sign !== 0x2b && sign !== 0x2d) || text.charCodeAt(at + 3) !== 0x3a) return undefined;
  const h = digitsAt(text, at + 1, 2);
  const m = digitsAt(text, at + 4, 2);
  if (h < 0 || m < 0) return undefined;
  return (sign === 0x2d ? -1 : 1) * (h * 60 + m);
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const isLeap = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;

/** Days from 1970-01-01 to a date of the proleptic Gregorian calendar (H. Hinnant's days_from_civil). */
function daysFromCivil(y: number, m: number, d: number): number {
  const year = m <= 2 ? y - 1 : y;
  const era = Math.floor(year / 400);
  const yearOfEra = year - era * 400;
  const dayOfYear = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

/** The digit at `at` (0 to 9), or a number outside 0 to 9 for any other character. */
const digit = (text: string, at: number): number => text.charCodeAt(at) - 0x30;

/**
 * The fraction at `at` (`.` then 1 to 6 digits) as its microseconds times 8 plus the count of
 * its characters (0 when there is none): one number, no object. -1 when it is malformed.
 */
function fractionAt(text: string, at: number): number {
  if (text.charCodeAt(at) !== 0x2e /* . */) return 0;
  let micros = 0;
  let end = at + 1;
  for (; end < text.length; end++) {
    const d = digit(text, end);
    if (!(d >= 0 && d <= 9)) break;
    if (end - at > 6) return -1; // more than 6 digits
    micros = micros * 10 + d;
  }
  if (end === at + 1) return -1; // no digit
  return micros * 10 ** (7 - (end - at)) * 8 + (end - at);
}

/** isoMicros that remembers the last text it read: one per column, whose values often repeat. */
export function timestampReader(): (text: string) => Micros | undefined {
  let lastText = '';
  let lastValue: Micros | undefined;
  return (text) => {
    if (text !== lastText) {
      lastValue = isoMicros(text);
      lastText = text;
    }
    return lastValue;
  };
}

/** Microseconds: a number while it is exact (below 2^53, the year 2255), a bigint beyond. */
export type Micros = number | bigint;

/**
 * Microseconds since 1970 (UTC) of an ISO 8601 date-time with a zone and at most microseconds
 * (what a TIMESTAMP holds exactly), or undefined when it is not one.
 */
export function isoMicros(text: string): Micros | undefined {
  // Read in one straight line: a run is a fresh process, and this runs mostly before the JIT has optimised it.
  if (text.length < 20 || text.charCodeAt(4) !== 0x2d || text.charCodeAt(7) !== 0x2d || text.charCodeAt(10) !== 0x54 || text.charCodeAt(13) !== 0x3a || text.charCodeAt(16) !== 0x3a) return undefined;
  const y0 = digit(text, 0), y1 = digit(text, 1), y2 = digit(text, 2), y3 = digit(text, 3);
  const mo0 = digit(text, 5), mo1 = digit(text, 6), d0 = digit(text, 8), d1 = digit(text, 9);
  const h0 = digit(text, 11), h1 = digit(text, 12), mi0 = digit(text, 14), mi1 = digit(text, 15), s0 = digit(text, 17), s1 = digit(text, 18);
  // Any character but a digit is below 0 or above 9: the unsigned view of each is at most 9 only for digits.
  if ((y0 >>> 0) > 9 || (y1 >>> 0) > 9 || (y2 >>> 0) > 9 || (y3 >>> 0) > 9 || (mo0 >>> 0) > 9 || (mo1 >>> 0) > 9 || (d0 >>> 0) > 9 || (d1 >>> 0) > 9) return undefined;
  if ((h0 >>> 0) > 9 || (h1 >>> 0) > 9 || (mi0 >>> 0) > 9 || (mi1 >>> 0) > 9 || (s0 >>> 0) > 9 || (s1 >>> 0) > 9) return undefined;
  const y = y0 * 1000 + y1 * 100 + y2 * 10 + y3;
  const mo = mo0 * 10 + mo1;
  const d = d0 * 10 + d1;
  const h = h0 * 10 + h1;
  const mi = mi0 * 10 + mi1;
  const s = s0 * 10 + s1;
  const fraction = fractionAt(text, 19);
  if (fraction < 0) return undefined;
  const offsetMinutes = zoneMinutes(text, 19 + (fraction & 7));
  if (offsetMinutes === undefined) return undefined;
  const days = mo === 2 && isLeap(y) ? 29 : DAYS_IN_MONTH[mo - 1];
  if (days === undefined || d < 1 || d > days || h > 23 || mi > 59 || s > 59) return undefined;
  const seconds = daysFromCivil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + s - offsetMinutes * 60;
  const fractionMicros = Math.floor(fraction / 8);
  const micros = seconds * 1_000_000 + fractionMicros;
  return Number.isSafeInteger(micros) ? micros : BigInt(seconds) * 1_000_000n + BigInt(fractionMicros);
}

/** Days since 1970-01-01 of a calendar day written `YYYY-MM-DD` (a DATE column's value), or undefined when it is not one. */
export function isoDays(text: string): number | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!m) return undefined;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const days = mo === 2 && isLeap(y) ? 29 : DAYS_IN_MONTH[mo - 1];
  return days === undefined || d < 1 || d > days ? undefined : daysFromCivil(y, mo, d);
}

/** The ISO 8601 text of microseconds since 1970 (UTC, all six digits): what isoMicros reads back to the same value. */
export function microsIso(micros: bigint): string {
  const seconds = micros / 1_000_000n - (micros % 1_000_000n < 0n ? 1n : 0n);
  const fraction = micros - seconds * 1_000_000n;
  return `${new Date(Number(seconds) * 1000).toISOString().slice(0, 19)}.${String(fraction).padStart(6, '0')}Z`;
}

/** The `YYYY-MM-DD` of a day counted from 1970-01-01. */
export const daysIso = (days: number): string => new Date(days * 86_400_000).toISOString().slice(0, 10);
