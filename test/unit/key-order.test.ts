import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decimalOrder, sortKeyed } from '../../src/core/records/key-order.js';
import type { Keyed } from '../../src/core/records/keyed.js';

// Issue 37: a snapshot's lines are sorted by key, and the order is that of the keys as strings
// (UTF-16 units: '10' before '9'), which the store, the merge and the held diff all rely on.
// Keys of decimal digits (the service's ids) are sorted without a JS comparator; whatever the
// keys, the order must be the comparator's, equal keys staying in arrival order.

const byComparator = (items: Keyed[]): Keyed[] => [...items].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
const keyed = (keys: string[]): Keyed[] => keys.map((key, i) => ({ key, line: `#${i}` }));
const digits = fc.stringMatching(/^[0-9]{0,20}$/);

describe('sortKeyed', () => {
  it('orders decimal keys of any length as strings, equal keys in arrival order, in place', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(digits, fc.constantFrom('1', '10', '9', '0', '', '1000180563800000712', '10002')), { maxLength: 300 }), (keys) => {
        const items = keyed(keys);
        const expected = byComparator(items);
        const result = sortKeyed(items);
        expect(result).toBe(items);
        expect(items.map((i) => i.line)).toEqual(expected.map((i) => i.line));
      }),
    );
  });

  it('falls back to the comparator for any other key, with the same order', () => {
    const other = fc.oneof(digits, fc.string({ maxLength: 4 }), fc.constantFrom('-5', '1.5', '０', '123456789012345678901', 'a', '/'));
    fc.assert(
      fc.property(fc.array(other, { maxLength: 200 }), (keys) => {
        const items = keyed(keys);
        const expected = byComparator(items);
        expect(sortKeyed(items).map((i) => i.line)).toEqual(expected.map((i) => i.line));
      }),
    );
  });

  it('a thousand ids of the service (19 and 5 digits) come out as the comparator puts them', () => {
    const keys = Array.from({ length: 1000 }, (_, i) => (i % 8 === 5 ? String(10000 + i) : `1${String(Math.floor(Math.random() * 1e9)).padStart(9, '0')}${String(i).padStart(9, '0')}`));
    const items = keyed(keys);
    expect(sortKeyed(items).map((i) => i.line)).toEqual(byComparator(keyed(keys)).map((i) => i.line));
  });
});

describe('decimalOrder', () => {
  it('gives the order of decimal keys of up to 20 digits, and none for any other key', () => {
    const order = (keys: string[]) => {
      const found = decimalOrder(keys);
      return found && Array.from(found);
    };
    expect(order(['10', '9', '1', '', '10'])).toEqual([3, 2, 0, 4, 1]);
    expect(order(['12345678901234567890', '1234567890123456789'])).toEqual([1, 0]);
    expect(order(['1', '-1'])).toBeUndefined();
    expect(order(['1', 'a'])).toBeUndefined();
    expect(order(['123456789012345678901'])).toBeUndefined();
  });
});
