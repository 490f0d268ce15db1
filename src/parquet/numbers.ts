import { RawNumber, type Json } from '../core/json.js';

// What each Parquet number type can hold exactly. A number arrives as a JS number (JSON.parse
// kept its text) or as a RawNumber (its text, which JSON.parse would have changed).

/** A number's value as `sign digits × 10^exponent`, with no leading or trailing zeros in `digits` ('' for zero). */
export interface Decimal {
  negative: boolean;
  digits: string;
  exponent: number;
}

const NUMBER = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/** The decimal value of a JSON number token, or undefined for text that is none. */
export function decimalOf(text: string): Decimal | undefined {
  const m = NUMBER.exec(text);
  if (!m) return undefined;
  const [, sign, whole, fraction = '', exp = '0'] = m;
  let digits = (whole! + fraction).replace(/^0+/, '');
  let exponent = Number(exp) - fraction.length;
  const trimmed = digits.replace(/0+$/, '');
  exponent += digits.length - trimmed.length;
  digits = trimmed;
  return { negative: sign === '-' && digits !== '', digits, exponent: digits === '' ? 0 : exponent };
}

const sameDecimal = (a: Decimal, b: Decimal): boolean => a.negative === b.negative && a.digits === b.digits && a.exponent === b.exponent;

/** The text a numeric value was sent as; undefined for anything else. */
export const numberText = (value: Json): string | undefined => (typeof value === 'number' ? String(value) : value instanceof RawNumber ? value.text : undefined);

/**
 * Whether a DOUBLE holds the value exactly as far as anyone reads it back: its shortest text
 * is the same decimal (`1.0`, `2E+3`, `1e-7`, `-0` are; `1E400` and 23 significant digits are not).
 */
export function doubleKeeps(text: string): boolean {
  const n = Number(text);
  if (!Number.isFinite(n)) return false;
  const sent = decimalOf(text);
  const held = decimalOf(String(n));
  return sent !== undefined && held !== undefined && sameDecimal(sent, held);
}

/** A plain integer token of at most 19 digits (every int64): an id past 2^53, read by BigInt itself. */
const PLAIN_INTEGER = /^-?(?:0|[1-9]\d{0,18})$/;

/** The integer a token's value is, when it is one (`1.0` and `2E+3` are); undefined otherwise. */
export function integerOf(text: string): bigint | undefined {
  // Every id of a dataset's rows comes here: the decimal's regexes and strings cost a tenth of its thread.
  if (PLAIN_INTEGER.test(text)) return BigInt(text);
  const d = decimalOf(text);
  if (!d || d.exponent < 0 || d.exponent > 40) return undefined;
  const n = BigInt(d.digits === '' ? '0' : d.digits + '0'.repeat(d.exponent));
  return d.negative ? -n : n;
}

/** DECIMAL(38) is the widest DuckDB, Spark and Arrow read. */
export const MAX_PRECISION = 38;

/** Digits before and after the point a DECIMAL needs for a token's value; undefined past MAX_PRECISION. */
export function decimalShape(text: string): { whole: number; scale: number } | undefined {
  const d = decimalOf(text);
  if (!d) return undefined;
  const scale = Math.max(0, -d.exponent);
  const whole = Math.max(0, d.digits.length + d.exponent);
  return whole + scale <= MAX_PRECISION ? { whole, scale } : undefined;
}

/** The unscaled integer of a token's value at `scale` digits after the point. */
export function unscaled(text: string, scale: number): bigint {
  const d = decimalOf(text)!;
  const shift = d.exponent + scale;
  const n = BigInt(d.digits === '' ? '0' : d.digits) * 10n ** BigInt(Math.max(0, shift)) / 10n ** BigInt(Math.max(0, -shift));
  return d.negative ? -n : n;
}
