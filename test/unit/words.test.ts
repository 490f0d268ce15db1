import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { count, grouped } from '../../src/core/words.js';

// grouped() writes what toLocaleString('en-US') writes, without loading the locale data.
describe('grouped', () => {
  it('groups any number as toLocaleString does in en-US', () => {
    fc.assert(
      fc.property(fc.oneof(fc.integer(), fc.maxSafeInteger(), fc.maxSafeNat().map((n) => -n), fc.double()), (n) => {
        expect(grouped(n)).toBe(n.toLocaleString('en-US'));
      }),
    );
    for (const n of [0, 7, 999, 1000, -1000, 969_696, 1_000_000, 2 ** 53 + 2]) expect(grouped(n)).toBe(n.toLocaleString('en-US'));
  });

  it('counts with the noun in the plural past one', () => {
    expect(count(1, 'record')).toBe('1 record');
    expect(count(3000, 'record')).toBe('3,000 records');
  });
});

describe('count', () => {
  it('takes an irregular plural', () => {
    expect(count(1, 'entry', 'entries')).toBe('1 entry');
    expect(count(0, 'entry', 'entries')).toBe('0 entries');
    expect(count(2, 'cached answer')).toBe('2 cached answers');
  });
});
