import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { copyBytes, sameBytes, viewOf } from '../../src/core/bytes.js';

// bytes.ts copies and compares four bytes at a time through DataViews it keeps per buffer:
// it must give what Buffer#equals and Buffer#copy give, at any offset and length, whichever
// buffers come in turn (the views it keeps must never answer for another buffer).

const bytes = fc.uint8Array({ minLength: 0, maxLength: 700 }).map((a) => Buffer.from(a));

describe('sameBytes and copyBytes', () => {
  it('compare as Buffer#equals does, buffers taken in turn', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(bytes, bytes, fc.nat(), fc.nat(), fc.nat(), fc.boolean()), { minLength: 1, maxLength: 8 }), (cases) => {
        for (const [a, b, i, j, n, same] of cases) {
          // Half the cases compare a run with a copy of itself, where only a byte changed may differ.
          const other = same ? Buffer.concat([b.subarray(0, j % (b.length + 1)), a]) : b;
          const at = a.length ? i % a.length : 0;
          const bt = same ? j % (b.length + 1) : other.length ? j % other.length : 0;
          const length = Math.min(n % 600, a.length - at, other.length - bt);
          if (length < 0) continue;
          const want = a.subarray(at, at + length).equals(other.subarray(bt, bt + length));
          expect(sameBytes(a, at, other, bt, length)).toBe(want);
        }
      }),
    );
  });

  it('tells a difference in any byte', () => {
    const a = Buffer.from('{"username":"f000123456","last_checked":"2026-11-01T00:00:00.123456+00:00"}');
    for (let i = 0; i < a.length; i++) {
      const b = Buffer.from(a);
      b[i] = b[i]! ^ 1;
      expect(sameBytes(a, 0, b, 0, a.length)).toBe(false);
      expect(sameBytes(b, 0, a, 0, a.length)).toBe(false);
    }
    expect(sameBytes(a, 0, Buffer.from(a), 0, a.length)).toBe(true);
  });

  it('copy as Buffer#copy does', () => {
    fc.assert(
      fc.property(bytes, fc.nat(), fc.nat(), fc.nat(), (src, i, n, to) => {
        const start = src.length ? i % src.length : 0;
        const end = Math.min(src.length, start + (n % 600));
        const dst = Buffer.alloc(1300, 7);
        const at = to % 600;
        const want = Buffer.alloc(1300, 7);
        src.copy(want, at, start, end);
        expect(copyBytes(src, start, end, dst, viewOf(dst), at)).toBe(at + end - start);
        expect(dst.equals(want)).toBe(true);
      }),
    );
  });
});
