import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import stringWidth from 'string-width';
import { NARROW, WIDE, cutToWidth, displayWidth, loadTextWidth } from '../../src/cli/terminal/text-width.js';
import { loadTable, renderTable, tableCell } from '../../src/cli/formats/table.js';
import { parseJson } from '../../src/core/json.js';

beforeAll(async () => {
  await loadTable();
  await loadTextWidth();
});

const graphemes = (text: string) => [...new Intl.Segmenter().segment(text)].map((s) => s.segment);
// Records people really have: every script, emoji of every kind, marks and invisible characters.
const HOSTILE = [
  '山田太郎',
  '김민준',
  'Zoë Ångström',
  'e\u0301e\u0301',
  'नमस्ते दुनिया',
  'مرحبا بالعالم',
  '👨‍👩‍👧‍👦 family',
  '🇯🇵🇫🇷🇧🇷',
  '👍🏽 ok',
  'ｶﾞｷﾞ half',
  'ＦＵＬＬ',
  'a\u200bb\u200dc',
  'tab\there\nnew\r\u0007\u001b[31m\u009b\u0085',
  '\u202eevil\u2066',
  '\ud800lone',
];

describe('display width: the scripts measured by adding up', () => {
  const each = (ranges: readonly (readonly [number, number])[]) => ranges.flatMap(([from, to]) => Array.from({ length: to - from + 1 }, (_, i) => String.fromCharCode(from + i)));
  const simple = [...each(NARROW), ...each(WIDE)];

  it('every such character takes what string-width says, alone and beside others', () => {
    for (const c of simple) {
      expect(displayWidth(c), `U+${c.charCodeAt(0).toString(16)}`).toBe(stringWidth(c));
      expect(displayWidth(`a${c}${c}`), `U+${c.charCodeAt(0).toString(16)}`).toBe(stringWidth(`a${c}${c}`));
    }
  });

  it('property: any text of them, with ASCII, measures and cuts as string-width and the grapheme segmenter do', () => {
    const char = fc.oneof(fc.constantFrom(...simple), fc.constantFrom(...'ab Z.,-'));
    fc.assert(
      fc.property(fc.array(char, { maxLength: 30 }), fc.integer({ min: 0, max: 40 }), (chars, width) => {
        const text = chars.join('');
        expect(displayWidth(text)).toBe(stringWidth(text));
        expect(graphemes(text)).toHaveLength(chars.length);
        const cut = cutToWidth(text, width);
        expect(cut.width).toBe(stringWidth(cut.text));
        expect(cut.width).toBeLessThanOrEqual(width);
        const next = text.slice(cut.text.length, cut.text.length + 1);
        if (next) expect(cut.width + stringWidth(next)).toBeGreaterThan(width);
      }),
    );
  });
});

describe('display width', () => {
  it.each([
    ['plain', 5],
    ['山田太郎', 8],
    ['김민준', 6],
    ['e\u0301', 1], // a letter and a combining mark
    ['👨‍👩‍👧', 2], // a ZWJ sequence is one glyph
    ['🇯🇵', 2], // a flag is two regional indicators, one glyph
    ['👍🏽', 2], // an emoji and its skin tone
    ['❤️', 2], // text-style heart with VS16 is emoji presentation
    ['a\u200bb', 2], // a zero-width space takes nothing
    ['ｶﾞ', 2], // half-width katakana with its half-width voiced mark
    ['ＦＵＬＬ', 8],
  ])('%s takes %i columns', (text, width) => {
    expect(displayWidth(text)).toBe(width);
  });

  it('cuts between grapheme clusters, never inside a sequence, a mark or a surrogate pair', () => {
    expect(cutToWidth('👨‍👩‍👧x', 1)).toEqual({ text: '', width: 0 });
    expect(cutToWidth('👨‍👩‍👧x', 2)).toEqual({ text: '👨‍👩‍👧', width: 2 });
    expect(cutToWidth('e\u0301e\u0301', 1)).toEqual({ text: 'e\u0301', width: 1 });
    expect(cutToWidth('山田', 3)).toEqual({ text: '山', width: 2 });
    expect(cutToWidth('🇯🇵🇫🇷', 3)).toEqual({ text: '🇯🇵', width: 2 });
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 30 }), fc.nat(40), (text, width) => {
        const cut = cutToWidth(text, width);
        expect(cut.width).toBeLessThanOrEqual(width);
        expect(displayWidth(cut.text)).toBe(cut.width);
        // A prefix made of whole clusters of the original.
        const kept = graphemes(cut.text);
        expect(graphemes(text).slice(0, kept.length)).toEqual(kept);
      }),
    );
  });
});

describe('table cells', () => {
  const text = (cell: { text: string }[]) => cell.map((p) => p.text).join('');

  it('escapes what would break the row or act on the terminal, and nothing a person reads', () => {
    expect(text(tableCell('tab\there\nnew\r\u0007\u001b[31m\u009b\u0085\u007f'))).toBe('tab\\there\\nnew\\r\\u{7}\\u{1b}[31m\\u{9b}\\u{85}\\u{7f}');
    expect(text(tableCell('\u202eevil\u2066 \u2028'))).toBe('\\u{202e}evil\\u{2066} \\u{2028}');
    expect(text(tableCell('\ud800lone 🙂'))).toBe('\\u{d800}lone 🙂');
    for (const kept of ['山田太郎', '👨‍👩‍👧‍👦', 'e\u0301', 'a\u200bb', 'مرحبا']) expect(text(tableCell(kept))).toBe(kept);
  });

  it('a null is empty, or a faint null with colour; the string "null" is plain text; "" is marked', () => {
    expect(tableCell(null)).toEqual([]);
    expect(tableCell(null, true)).toEqual([{ text: 'null', mark: true }]);
    expect(tableCell('null', true)).toEqual([{ text: 'null' }]);
    expect(tableCell('', true)).toEqual([{ text: '""', mark: true }]);
    expect(tableCell(undefined, true)).toEqual([]);
    const colored = renderTable(['a', 'b'], [{ a: null, b: 'null' }, { a: 'x\ty', b: 1 }], { color: true });
    expect(colored).toBe('a     b\n\u001b[2mnull\u001b[22m  null\nx\u001b[2m\\t\u001b[22my  1\n');
    expect(renderTable(['a', 'b'], [{ a: null, b: 'null' }])).toBe('a  b\n   null\n');
  });

  it('numbers as sent: a RawNumber prints its text', () => {
    const record = parseJson('{"id":123456789012345678901234567890,"score":0.1}') as never;
    // A score is a number: aligned right.
    expect(renderTable(['id', 'score'], [record])).toBe('id                              score\n123456789012345678901234567890    0.1\n');
  });
});

/** Where each column starts on screen, by display width, in each line (cells hold no double space). */
function starts(line: string): number[] {
  const out: number[] = [];
  for (const m of line.matchAll(/(?:^|(?<= {2}))[^ ](?:[^ ]| (?! ))*/g)) out.push(displayWidth(line.slice(0, m.index)));
  return out;
}

describe('renderTable', () => {
  const rows = HOSTILE.map((bio, i) => ({ id: i, name: HOSTILE[(i + 3) % HOSTILE.length]!, bio }));

  it('aligns columns by display width and fits any width, cutting with …', () => {
    for (const width of [undefined, 120, 60, 40, 20]) {
      const lines = renderTable(['id', 'name', 'bio'], rows, { width }).trimEnd().split('\n');
      expect(lines).toHaveLength(rows.length + 1);
      const header = starts(lines[0]!);
      for (const line of lines) {
        if (width) expect(displayWidth(line)).toBeLessThanOrEqual(width);
        expect(starts(line)).toEqual(header);
      }
    }
    const at60 = renderTable(['id', 'name', 'bio'], rows, { width: 60 });
    expect(at60).toContain('…');
    expect(at60).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u202e]/);
  });

  it('a cut keeps escapes whole and never leaves half a surrogate pair', () => {
    // A terminal of 5 columns: the table keeps its last two free, 3 are left.
    const lines = renderTable(['a'], [{ a: 'x\u001by' }, { a: '🙂🙂🙂🙂' }], { width: 5 }).split('\n');
    expect(lines[1]).toBe('x…');
    expect(lines[2]).toBe('🙂…');
    expect(lines.join('')).not.toMatch(/\p{Surrogate}/u);
  });

  it('a Prepend character that ends a cell is escaped: it would join the gap after it into one cluster', () => {
    const lines = renderTable(['a', 'b'], [{ a: '\u{11a84}', b: 'Z' }, { a: 'x\u0600', b: 'Z' }, { a: '\u0600x', b: 'Z' }]).split('\n');
    expect(lines[1]).toBe('\\u{11a84}  Z');
    expect(lines[2]).toBe('x\\u{600}   Z');
    // Inside a cell it joins the character after it, as it should.
    expect(lines[3]).toBe('\u0600x          Z');
  });

  it('property: any records, any width of at least 3 a column: every line fits, the columns align, no number is cut', () => {
    const cell = fc.oneof(fc.string({ unit: 'grapheme', maxLength: 12 }), fc.string({ unit: 'binary', maxLength: 8 }), fc.constantFrom(...HOSTILE), fc.constant(null), fc.integer());
    fc.assert(
      fc.property(fc.array(fc.tuple(cell, cell, cell), { minLength: 1, maxLength: 8 }), fc.integer({ min: 13, max: 100 }), fc.boolean(), (tuples, width, color) => {
        // A last column that always holds Z: where it starts shows whether everything before it lines up.
        const records = tuples.map(([a, b, c]) => ({ a, b, c, Z: 'Z' }));
        const lines = renderTable(['a', 'b', 'c', 'Z'], records, { width, color }).split('\n').slice(0, -1);
        expect(lines).toHaveLength(records.length + 1);
        const plain = lines.map((line) => line.replace(/\u001b\[2?2m/g, ''));
        // Columns that would cut a number are left out from the end, Z first.
        if (plain[0]!.endsWith('Z')) {
          const lastColumn = plain.map((line) => displayWidth(line.slice(0, line.lastIndexOf('Z'))));
          expect(new Set(lastColumn).size).toBe(1);
        }
        for (const line of plain) expect(displayWidth(line)).toBeLessThanOrEqual(width);
        const shown = plain[0]!.split(/ +/).length;
        records.forEach((r, i) => [r.a, r.b, r.c].slice(0, shown).forEach((v) => typeof v === 'number' && expect(plain[i + 1]).toContain(String(v))));
      }),
    );
  });
});
