import { InvalidArgumentError } from 'commander';
import { durationMs } from '../../core/since.js';

// Argument parsers for Commander: each one rejects a bad value before any request is sent,
// which Commander reports as a usage error (exit 2).

export function positiveInt(name: string, max = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    if (!/^\d+$/.test(value.trim()) || Number(value) < 1 || Number(value) > max) {
      throw new InvalidArgumentError(`${name} must be a whole number from 1${max < Number.MAX_SAFE_INTEGER ? ` to ${max}` : ' up'}.`);
    }
    return Number(value);
  };
}

export function nonNegativeInt(name: string, max = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    if (!/^\d+$/.test(value.trim()) || Number(value) > max) {
      throw new InvalidArgumentError(`${name} must be a whole number from 0${max < Number.MAX_SAFE_INTEGER ? ` to ${max}` : ' up'}.`);
    }
    return Number(value);
  };
}

export function positiveSeconds(value: string): number {
  const n = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value.trim()) || !(n > 0) || n > 3600) {
    throw new InvalidArgumentError('Use a number of seconds greater than 0 and at most 3600.');
  }
  return n;
}

/** `--fields a,b`: non-empty names, no duplicates, order kept. */
export function fieldList(value: string): string[] {
  const fields = value.split(',').map((f) => f.trim());
  if (fields.some((f) => f === '')) throw new InvalidArgumentError('Give field names separated by commas, such as username,last_checked.');
  if (new Set(fields).size !== fields.length) throw new InvalidArgumentError('A field is named twice.');
  return fields;
}

export function nonEmpty(name: string) {
  return (value: string): string => {
    if (value.trim() === '') throw new InvalidArgumentError(`${name} must not be empty.`);
    return value;
  };
}

export function fraction(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !(n >= 0 && n <= 1)) throw new InvalidArgumentError('Use a fraction from 0 to 1, such as 0.2.');
  return n;
}

export function httpStatus(value: string): number {
  if (!/^[1-5]\d\d$/.test(value.trim())) throw new InvalidArgumentError('Use an HTTP status from 100 to 599.');
  return Number(value);
}

/** `--wait-lock 30s`: a duration with its unit (s, m, h), kept with the text for messages. */
export function waitDuration(value: string): { ms: number; text: string } {
  const ms = durationMs(value);
  if (ms === undefined || ms > 24 * 3600e3) throw new InvalidArgumentError('Use a duration such as 30s, 5m or 1h (at most 24h).');
  return { ms, text: value.trim() };
}
