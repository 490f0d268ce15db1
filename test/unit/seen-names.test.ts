import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SeenNames } from '../../src/cli/input/seen-names.js';

describe('SeenNames', () => {
  it('says a name is new exactly when a Set would, over any names', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.string({ maxLength: 6 }), fc.string({ unit: 'binary', maxLength: 40 }), fc.constantFrom('a', 'b', 'ab', 'ba', '')), { maxLength: 300 }), (names) => {
        const seen = new SeenNames();
        const set = new Set<string>();
        for (const name of names) {
          const fresh = !set.has(name);
          set.add(name);
          expect(seen.add(name)).toBe(fresh);
        }
      }),
      { numRuns: 100 },
    );
  });

  it('tells a name of two-byte characters from one of one-byte characters with the same bytes', () => {
    const seen = new SeenNames();
    // 'Ā' is U+0100, 00 01 in UTF-16LE: the bytes of '\x00\x01' in Latin-1.
    expect([seen.add('Ā'), seen.add('\x00\x01'), seen.add('Ā'), seen.add('\x00\x01')]).toEqual([true, true, false, false]);
  });

  it('keeps every one of many names (through many growths of its table)', () => {
    const seen = new SeenNames();
    let fresh = 0;
    for (let i = 0; i < 200_000; i++) if (seen.add(`user${i}`)) fresh++;
    let again = 0;
    for (let i = 0; i < 200_000; i += 7) if (seen.add(`user${i}`)) again++;
    expect([fresh, again]).toEqual([200_000, 0]);
  });
});
