import type { JsonObject } from '../../core/classify.js';
import type { Json } from '../../core/json.js';
import { cellText } from './delimited.js';
import { cutToWidth, displayWidth, loadTextWidth } from './text-width.js';

export { loadTextWidth as loadTable };

const GAP = '  ';

/**
 * A run of a cell's text. A `mark` (an escape such as `\n`, a null, the `""` of an empty
 * string) is sgq's, not the record's: it is shown faint when colour is on and never cut.
 */
interface Piece {
  text: string;
  mark?: true;
}
type Cell = Piece[];

// What would break a row or act on the terminal rather than show: C0 and C1 controls (ESC
// starts the terminal's escape sequences) and DEL; the line and paragraph separators; the
// bidirectional embeddings, overrides and isolates, which reorder what follows them, the
// next columns included; lone surrogates, which would reach the terminal as U+FFFD. Each
// is a grapheme boundary, so splitting text at them leaves every cluster whole.
const UNSAFE = /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069\p{Surrogate}]/gu;
const ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };
const escape = (c: string): string => ESCAPES[c] ?? `\\u{${c.codePointAt(0)!.toString(16)}}`;

// Unicode's Prepend characters (GraphemeBreakProperty.txt) join the character after them into
// one cluster: one that ends a run of text would take in the escape, the gap or the padding
// that follows, and shift the columns after it on a terminal that clusters. It is escaped.
// As code point ranges, not a regular expression: V8 14 (Node 26) fails to match an astral
// range in a class followed by `$` (/[\u{11a84}-\u{11a89}]$/u.test('\u{11a84}') is false).
const PREPEND: readonly (readonly [number, number])[] = [
  [0x600, 0x605], [0x6dd, 0x6dd], [0x70f, 0x70f], [0x890, 0x891], [0x8e2, 0x8e2], [0xd4e, 0xd4e], [0x110bd, 0x110bd], [0x110cd, 0x110cd],
  [0x111c2, 0x111c3], [0x1193f, 0x1193f], [0x11941, 0x11941], [0x11a3a, 0x11a3a], [0x11a84, 0x11a89], [0x11d46, 0x11d46], [0x11f02, 0x11f02],
];

/** The last character of `text` when it is a Prepend character, else undefined. */
function prependAtEnd(text: string): string | undefined {
  const low = text.charCodeAt(text.length - 1);
  const last = low >= 0xdc00 && low <= 0xdfff && text.length > 1 ? text.slice(-2) : text.slice(-1);
  const cp = last.codePointAt(0)!;
  return cp >= 0x600 && PREPEND.some(([from, to]) => cp >= from && cp <= to) ? last : undefined;
}

/** A run of the record's text, its last character escaped when it would join what follows. */
function pushText(cell: Cell, text: string): void {
  const last = prependAtEnd(text);
  if (last === undefined) return void cell.push({ text });
  if (text.length > last.length) cell.push({ text: text.slice(0, -last.length) });
  cell.push({ text: escape(last), mark: true });
}

/** A cell's text split into the record's text and sgq's escapes. */
function pieces(text: string): Cell {
  const cell: Cell = [];
  let start = 0;
  for (const match of text.matchAll(UNSAFE)) {
    if (match.index > start) pushText(cell, text.slice(start, match.index));
    cell.push({ text: escape(match[0]), mark: true });
    start = match.index + match[0].length;
  }
  if (start < text.length) pushText(cell, text.slice(start));
  return cell;
}

/**
 * What a person reads in a cell: the text, with control characters escaped so that a row
 * stays one line; an empty string as `""`; nested values as compact JSON; numbers as sent.
 * A null is a faint `null` with colour and an empty cell without, so the string "null" is
 * never mistaken for it; a key the record lacks is an empty cell.
 */
export function tableCell(value: Json | undefined, color = false): Cell {
  if (value === undefined) return [];
  if (value === null) return color ? [{ text: 'null', mark: true }] : [];
  if (value === '') return [{ text: '""', mark: true }];
  return pieces(cellText(value));
}

const widthOf = (cell: Cell): number => cell.reduce((sum, piece) => sum + (piece.mark ? piece.text.length : displayWidth(piece.text)), 0);

/** The cell cut to `width` columns, its end replaced by `…` when it was wider; marks are kept whole or left out. */
function fit(cell: Cell, width: number): Cell {
  if (widthOf(cell) <= width) return cell;
  if (width <= 0) return [];
  let room = width - 1;
  const out: Cell = [];
  for (const piece of cell) {
    const cut = piece.mark ? { text: piece.text.length <= room ? piece.text : '', width: piece.text.length } : cutToWidth(piece.text, room);
    if (cut.text) out.push({ ...piece, text: cut.text });
    if (cut.text !== piece.text) break;
    room -= cut.width;
  }
  const last = out.at(-1);
  if (last && !last.mark) last.text = last.text.trimEnd();
  out.push({ text: '…' });
  return out;
}

const paint = (cell: Cell, color: boolean): string => cell.map((p) => (color && p.mark ? `\u001b[2m${p.text}\u001b[22m` : p.text)).join('');

/**
 * Column widths that share `total`: a column that needs less than an even share keeps its
 * natural width, and what is left is split evenly between the wider ones.
 */
export function shareWidths(natural: readonly number[], total: number | undefined): number[] {
  const widths = [...natural];
  if (total === undefined) return widths;
  let room = Math.max(natural.length, total - GAP.length * (natural.length - 1));
  if (natural.reduce((a, b) => a + b, 0) <= room) return widths;
  const order = natural.map((w, i) => [w, i] as const).sort((a, b) => a[0] - b[0]);
  let left = order.length;
  for (const [w, i] of order) {
    const share = Math.max(1, Math.floor(room / left));
    widths[i] = Math.min(w, share);
    room -= widths[i]!;
    left--;
  }
  return widths;
}

export interface TableOptions {
  /** A terminal's width, which the columns share; none for a pipe or a file. */
  width?: number;
  /** Whether sgq's marks (escapes, null) are shown faint. */
  color?: boolean;
}

/** The columns of a table and their widths, fixed once set. */
export interface TableLayout {
  columns: readonly string[];
  widths: readonly number[];
  color: boolean;
}

const cellsOf = (columns: readonly string[], rows: readonly JsonObject[], color: boolean): Cell[][] => rows.map((r) => columns.map((c) => tableCell(r[c], color)));

/**
 * Columns as wide as their widest cell among `rows` (the header's included); with `width`,
 * they share it. Needs `loadTable()` first.
 */
export function tableLayout(columns: readonly string[], rows: readonly JsonObject[], options: TableOptions & { roomToGrow?: boolean } = {}): TableLayout {
  return layoutOf(columns, cellsOf(columns, rows, options.color === true), options);
}

function layoutOf(columns: readonly string[], cells: readonly Cell[][], options: TableOptions & { roomToGrow?: boolean }): TableLayout {
  const natural = columns.map((c, i) => cells.reduce((max, row) => Math.max(max, widthOf(row[i]!)), widthOf(pieces(c))));
  const widths = shareWidths(natural, options.width);
  if (options.roomToGrow && options.width !== undefined) growInto(widths, options.width);
  return { columns, widths, color: options.color === true };
}

/**
 * Widths set by a first page leave later, longer values some room: what the terminal has
 * spare is shared out, each column growing at most to twice its width.
 */
function growInto(widths: number[], total: number): void {
  let spare = total - widths.reduce((a, b) => a + b, 0) - GAP.length * (widths.length - 1);
  const each = Math.floor(spare / Math.max(1, widths.length));
  for (let i = 0; i < widths.length && spare > 0; i++) {
    const extra = Math.min(widths[i]!, each, spare);
    widths[i]! += extra;
    spare -= extra;
  }
}

/** The lines of `rows` in `layout`, after the header line when asked; a wider cell is cut with `…`. */
export function renderRows(layout: TableLayout, rows: readonly JsonObject[], withHeader: boolean): string {
  return linesOf(layout, cellsOf(layout.columns, rows, layout.color), withHeader);
}

function linesOf(layout: TableLayout, cells: readonly Cell[][], withHeader: boolean): string {
  const { columns, widths, color } = layout;
  const line = (row: readonly Cell[]) => {
    let text = '';
    row.forEach((cell, i) => {
      const shown = fit(cell, widths[i]!);
      text += (i === 0 ? '' : GAP) + paint(shown, color) + (i === row.length - 1 ? '' : ' '.repeat(widths[i]! - widthOf(shown)));
    });
    return text.replace(/ +$/, '');
  };
  let out = withHeader ? `${line(columns.map((c) => pieces(c)))}\n` : '';
  for (const row of cells) out += `${line(row)}\n`;
  return out;
}

/**
 * A header line and one line per record, columns two spaces apart, no rules: a page of 500
 * records is 501 lines. Columns are as wide as their widest cell on a terminal's screen;
 * with `width`, they share it and long cells are cut with `…`. Needs `loadTable()` first.
 */
export function renderTable(columns: readonly string[], rows: readonly JsonObject[], options: TableOptions = {}): string {
  // Each cell worked out once, for the widths and for the lines.
  const cells = cellsOf(columns, rows, options.color === true);
  return linesOf(layoutOf(columns, cells, options), cells, true);
}
