import { describe, expect, it } from 'vitest';
import { ExitCode, SgqError } from '../../src/core/errors.js';
import { parseSince } from '../../src/core/since.js';

const now = new Date('2026-11-21T12:00:00.000Z');

describe('parseSince', () => {
  it('reads Z and +00:00 as the same instant', () => {
    expect(parseSince('2024-04-07T10:00:00Z')).toBe(parseSince('2024-04-07T10:00:00+00:00'));
    expect(parseSince('2024-04-07T10:00:00Z')).toBe('2024-04-07T10:00:00.000000+00:00');
  });

  it('converts other offsets to UTC and keeps microseconds', () => {
    expect(parseSince('2024-04-07T12:30:00.123456+02:00')).toBe('2024-04-07T10:30:00.123456+00:00');
    expect(parseSince('2024-04-07T00:15:00-05:30')).toBe('2024-04-07T05:45:00.000000+00:00');
    expect(parseSince('2024-04-07T10:00:00.5Z')).toBe('2024-04-07T10:00:00.500000+00:00');
  });

  it('reads a date or a time without offset as UTC', () => {
    expect(parseSince('2024-04-07')).toBe('2024-04-07T00:00:00.000000+00:00');
    expect(parseSince('2024-04-07T10:20')).toBe('2024-04-07T10:20:00.000000+00:00');
  });

  it.each([
    ['90m', '2026-11-21T10:30:00.000000+00:00'],
    ['24h', '2026-11-20T12:00:00.000000+00:00'],
    ['7d', '2026-11-14T12:00:00.000000+00:00'],
    ['2w', '2026-11-07T12:00:00.000000+00:00'],
    ['30s', '2026-11-21T11:59:30.000000+00:00'],
  ])('reads the age %s relative to now', (age, expected) => {
    expect(parseSince(age, now)).toBe(expected);
  });

  it.each(['yesterday', '2024-02-30', '2024-13-01T00:00:00Z', '2024-04-07T25:00:00Z', '2024-04-07T10:00:00+25:00', '7 days', '', '12', '-1d'])(
    'rejects %j as a usage error',
    (bad) => {
      let caught: unknown;
      try {
        parseSince(bad, now);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(SgqError);
      expect((caught as SgqError).exitCode).toBe(ExitCode.usage);
    },
  );
});
