import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isoTime } from '../../src/core/iso-time.js';

// isoTime writes what Date#toISOString writes, from the UTC fields alone (toISOString sets up
// the local time zone first, which a one-page run never needs otherwise).

describe('isoTime', () => {
  it('writes any time as toISOString does', () => {
    const min = Date.UTC(-20000, 0, 1);
    const max = Date.UTC(20000, 11, 31, 23, 59, 59, 999);
    fc.assert(fc.property(fc.date({ min: new Date(min), max: new Date(max), noInvalidDate: true }), (date) => {
          expect(isoTime(date)).toBe(date.toISOString());
        }), { numRuns: 20_000 });
  });

  it.each([0, 1, 9, 10, 99, 100, 999, -1, Date.UTC(0, 0, 1), Date.UTC(9999, 11, 31, 23, 59, 59, 999), Date.UTC(10000, 0, 1), -62198755200001])('writes %d as toISOString does', (ms) => {
    expect(isoTime(new Date(ms))).toBe(new Date(ms).toISOString());
  });

  it('is now by default', () => {
    const before = Date.now();
    const at = Date.parse(isoTime());
    expect(at).toBeGreaterThanOrEqual(before);
    expect(at).toBeLessThanOrEqual(Date.now());
  });
});
