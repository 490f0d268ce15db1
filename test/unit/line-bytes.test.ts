import { describe, expect, it } from 'vitest';
import { LineBytes } from '../../src/core/records/line-bytes.js';
import type { Keyed } from '../../src/core/records/keyed.js';

// Issue 37: the store's gzip takes a snapshot's bytes in pieces, each a round trip through
// libuv's threads; LineBytes joins its pieces into fewer, larger ones on request, the
// bytes unchanged, every piece whole lines.

const lines = (n: number, width: number): Keyed[] => Array.from({ length: n }, (_, i) => ({ key: String(i), line: `{"id":${i},"t":"${'é'.repeat(width)}"}` }));
const text = (items: Keyed[]) => items.map((i) => `${i.line}\n`).join('');

describe('LineBytes.pieces', () => {
  for (const [what, items] of [['kept (a small export)', lines(2000, 200)], ['encoded as read (past what is kept)', lines(4000, 400)]] as const) {
    it(`joins pieces to at least the size asked, whole lines, the same bytes: ${what}`, () => {
      const least = 256 * 1024;
      const pieces = [...LineBytes.of(items).pieces(least)];
      expect(Buffer.concat(pieces).toString('utf8')).toBe(text(items));
      expect(pieces.length).toBeGreaterThan(1);
      for (const piece of pieces.slice(0, -1)) expect(piece.length).toBeGreaterThanOrEqual(least);
      for (const piece of pieces) expect(piece.at(-1)).toBe(0x0a);
    });
  }

  it('without a size, gives its own pieces of at most 128 KiB', () => {
    const items = lines(1000, 200);
    const pieces = [...LineBytes.of(items).pieces()];
    expect(Buffer.concat(pieces).toString('utf8')).toBe(text(items));
    for (const piece of pieces) expect(piece.length).toBeLessThanOrEqual(128 * 1024);
  });
});
