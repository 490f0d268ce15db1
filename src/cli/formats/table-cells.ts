import type { Json } from '../../core/json.js';
import { RawNumber } from '../../core/json.js';
import { cellText } from './delimited.js';
import { cutToWidth, displayWidth } from '../terminal/text-width.js';
import type { TableColumn } from './table-columns.js';
import { unsafePattern, escapeChar as escape } from '../terminal/visible.js';

// A table's cells: what a person reads of a value, escaped so that a row stays one line and
// nothing acts on the terminal (visible.ts decides what), and cut to a width between
// characters a person sees as one.

/**
 * A run of a cell's text. A `mark` (an escape such as `\n`, a null, the `""` of an empty
 * string) is sgq's, not the record's: it is shown faint when colour is on and never cut.
 */
export interface Piece {
  text: string;
  mark?: true;
}
export type Cell = Piece[];

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
export function pieces(text: string): Cell {
  const cell: Cell = [];
  let start = 0;
  for (const match of text.matchAll(unsafePattern())) {
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

export const widthOf = (cell: Cell): number => cell.reduce((sum, piece) => sum + (piece.mark ? piece.text.length : displayWidth(piece.text)), 0);

/** The cell cut to `width` columns, its end replaced by `…` when it was wider; marks are kept whole or left out. */
export function fit(cell: Cell, width: number, known = widthOf(cell)): Cell {
  if (known <= width) return cell;
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

export const paint = (cell: Cell, color: boolean): string => cell.map((p) => (color && p.mark ? `\u001b[2m${p.text}\u001b[22m` : p.text)).join('');


/** A cell as a table lays it out: its pieces, the columns they take, and whether it may be cut. */
export interface Shown {
  pieces: Cell;
  width: number;
  /** A number, an id, a handle or a date: never cut. */
  whole: boolean;
}

// The service's timestamps (ISO 8601): a table shows their date, as the service wrote it.
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/;
// A string of digits is an id (`user_id`, a post's `id`): cut, it would name another.
const DIGITS = /^-?\d+$/;

/** What a column shows of a record's value. */
export function shownCell(column: TableColumn, value: Json | undefined, color: boolean): Shown {
  const shown = column.date && typeof value === 'string' && TIMESTAMP.test(value) ? value.slice(0, 10) : value;
  const cell = tableCell(shown, color);
  const whole = column.whole || typeof shown === 'number' || shown instanceof RawNumber || (typeof shown === 'string' && DIGITS.test(shown));
  return { pieces: cell, width: widthOf(cell), whole };
}

/** A header: a label, which may be cut. */
export function headerCell(column: TableColumn): Shown {
  const cell = pieces(column.header);
  return { pieces: cell, width: widthOf(cell), whole: false };
}
