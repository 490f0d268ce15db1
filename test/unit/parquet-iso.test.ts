import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isoMicros as micros, timestampReader } from '../../src/parquet/iso-micros.js';

/** The microseconds as a bigint, whichever of number or bigint isoMicros gave. */
const isoMicros = (text: string): bigint | undefined => {
  const value = micros(text);
  return value === undefined ? undefined : BigInt(value);
};

// isoMicros decides which strings a TIMESTAMP column holds and their values: made faster, it
// must answer exactly as the Date-object version DuckDB's reads were checked against.
const ISO = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?(Z|[+-]\d{2}:\d{2})$/;
function reference(text: string): bigint | undefined {
  const m = ISO.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, fraction = '', zone] = m;
  // setUTCFullYear, not Date.UTC: Date.UTC reads the years 0 to 99 as 1900 to 1999.
  const check = new Date(0);
  check.setUTCFullYear(Number(y), Number(mo) - 1, Number(d));
  check.setUTCHours(Number(h), Number(mi), Number(s));
  const ms = check.getTime();
  if (check.getUTCDate() !== Number(d) || check.getUTCMonth() !== Number(mo) - 1 || Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return undefined;
  let offsetMinutes = 0;
  if (zone !== 'Z') offsetMinutes = (zone!.startsWith('-') ? -1 : 1) * (Number(zone!.slice(1, 3)) * 60 + Number(zone!.slice(4, 6)));
  return (BigInt(ms) - BigInt(offsetMinutes) * 60_000n) * 1000n + BigInt(fraction.padEnd(6, '0'));
}

const digits = (width: number, max: number) => fc.integer({ min: 0, max }).map((n) => String(n).padStart(width, '0'));

describe('isoMicros', () => {
  it('answers as the Date-object version over any date-time shaped text, valid or not (fast-check)', () => {
    const year = fc.oneof(digits(4, 9999), digits(4, 99), fc.constantFrom('1900', '2000', '2100', '2400', '0000', '0004', '2255', '2256', '9999'));
    const fraction = fc.oneof(fc.constant(''), digits(1, 9).map((f) => `.${f}`), digits(3, 999).map((f) => `.${f}`), digits(6, 999_999).map((f) => `.${f}`));
    const zone = fc.oneof(fc.constant('Z'), fc.tuple(fc.constantFrom('+', '-'), digits(2, 99), digits(2, 99)).map(([s, h, m]) => `${s}${h}:${m}`));
    const text = fc.tuple(year, digits(2, 13), digits(2, 32), digits(2, 24), digits(2, 60), digits(2, 60), fraction, zone).map(([y, mo, d, h, mi, s, f, z]) => `${y}-${mo}-${d}T${h}:${mi}:${s}${f}${z}`);
    fc.assert(fc.property(text, (t) => {
      expect(isoMicros(t)).toBe(reference(t));
    }), { numRuns: 20_000 });
    // The same texts with a character replaced, inserted or cut: the hand-written reader must refuse exactly what the pattern refused.
    const char = fc.constantFrom('0', '9', '-', ':', 'T', 't', '.', 'Z', 'z', '+', ' ', 'x', '\u0660', '');
    const mutated = fc.tuple(text, fc.nat(), char, fc.constantFrom('replace', 'insert', 'cut')).map(([t, at, c, how]) => {
      const i = at % (t.length + 1);
      return how === 'replace' ? t.slice(0, i) + c + t.slice(i + 1) : how === 'insert' ? t.slice(0, i) + c + t.slice(i) : t.slice(0, i);
    });
    fc.assert(fc.property(mutated, (t) => {
      expect(isoMicros(t)).toBe(reference(t));
    }), { numRuns: 30_000 });
  });

  it('knows leap days and the ends of months, and reads the service\'s timestamps', () => {
    expect(isoMicros('2024-02-29T00:00:00Z')).toBe(1_709_164_800_000_000n);
    expect(isoMicros('2023-02-29T00:00:00Z')).toBeUndefined();
    expect(isoMicros('1900-02-29T00:00:00Z')).toBeUndefined();
    expect(isoMicros('2000-02-29T00:00:00Z')).toBeDefined();
    expect(isoMicros('2026-04-31T00:00:00Z')).toBeUndefined();
    expect(isoMicros('2026-11-01T00:00:00.000568+00:00')).toBe(1_793_491_200_000_568n);
    expect(isoMicros('9999-12-31T23:59:59.999999-23:59')).toBe(reference('9999-12-31T23:59:59.999999-23:59'));
    // The first century is itself, not the 1900s (Date.UTC's reading, which 3.0 followed).
    expect(isoMicros('0001-01-01T00:00:00Z')).toBe(-62_135_596_800_000_000n);
    expect(isoMicros('0099-12-31T23:59:59.5Z')).toBe(-59_011_459_200_500_000n);
    expect(isoMicros('0000-02-29T00:00:00Z')).toBe(-62_162_121_600_000_000n);
  });

  it('a column\'s reader remembers its last text, and answers as isoMicros in any order', () => {
    const read = timestampReader();
    const texts = ['2026-11-01T00:00:00.000568+00:00', '2026-11-01T00:00:00.000568+00:00', 'not a date', 'not a date', '2026-11-01T00:00:00.000568+00:00', '2024-02-29T00:00:00Z'];
    expect(texts.map(read)).toEqual(texts.map(micros));
  });
});
