import type { Shown } from './table-cells.js';
import type { TableColumn } from './table-columns.js';

// How a table's columns share a terminal: which columns fit (numbers, ids, handles and dates
// are never cut, so a column is left out before one would be), and how wide each is.

export const GAP = '  ';
/** The narrowest a column of text gets when cut: five characters and `…`. */
export const CUT_MIN = 6;
/**
 * Columns a terminal's table leaves free at the end of its lines: terminals that draw a
 * skin-toned emoji or a VS16 emoji wider than Unicode says (tmux 3.3: 👍🏽 takes 4, not 2)
 * would wrap such a row; with these spare, it only ends a little further right.
 */
const MARGIN = 2;
/** A header this wide or narrower is never cut (every default column's); a longer field name may be. */
const HEADER_KEPT = 10;

export interface TableOptions {
  /** A terminal's width, which the columns share; none for a pipe or a file. */
  width?: number;
  /** Whether sgq's marks (escapes, null) are shown faint. */
  color?: boolean;
  /** `--wide`: every cell whole, whatever the terminal's width. */
  wide?: boolean;
}

/** The columns of a table and their widths, fixed once set. */
export interface TableLayout {
  columns: readonly TableColumn[];
  widths: readonly number[];
  color: boolean;
  /** The width no line may pass (a terminal's); none for a pipe, a file or --wide. */
  limit?: number;
  /** The headers of the columns left out to fit the terminal, in order. */
  left: readonly string[];
}

const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);

/**
 * Column widths that share `total` (gaps included): each gets at least its `least`; one that
 * needs less than an even share keeps its natural width, and the wider ones split the rest.
 */
export function shareWidths(natural: readonly number[], total: number | undefined, least: readonly number[] = natural.map(() => 1)): number[] {
  const widths = [...natural];
  if (total === undefined) return widths;
  let room = Math.max(sum(least), total - GAP.length * (natural.length - 1));
  if (sum(natural) <= room) return widths;
  let leastLeft = sum(least);
  let left = natural.length;
  for (const i of natural.map((_, i) => i).sort((a, b) => natural[a]! - natural[b]!)) {
    leastLeft -= least[i]!;
    widths[i] = Math.max(least[i]!, Math.min(natural[i]!, Math.floor(room / left), room - leastLeft));
    room -= widths[i]!;
    left--;
  }
  return widths;
}

/** The narrowest column `i` may be: its widest whole cell, and its header unless that is long. */
function leastWidth(header: Shown, cells: readonly (readonly Shown[])[], i: number, natural: number): number {
  let whole = 0;
  for (const row of cells) if (row[i]!.whole && row[i]!.width > whole) whole = row[i]!.width;
  const floor = Math.max(CUT_MIN, header.width <= HEADER_KEPT ? header.width : 0);
  return Math.max(whole, Math.min(natural, floor));
}

/**
 * Columns as wide as their widest cell (the header's included). With a terminal's width (and
 * not --wide), the columns that fit share it, and those that do not fit are left out from the
 * end; with `roomToGrow`, what is spare lets each grow to twice its width for later pages.
 */
export function layoutOf(columns: readonly TableColumn[], header: readonly Shown[], cells: readonly (readonly Shown[])[], options: TableOptions & { roomToGrow?: boolean }): TableLayout {
  const natural = columns.map((_, i) => cells.reduce((max, row) => Math.max(max, row[i]!.width), header[i]!.width));
  const color = options.color === true;
  const limit = options.wide || options.width === undefined ? undefined : Math.max(1, options.width - MARGIN);
  if (limit === undefined) return { columns, widths: natural, color, left: [] };
  const least = columns.map((_, i) => leastWidth(header[i]!, cells, i, natural[i]!));
  let n = columns.length;
  while (n > 1 && sum(least.slice(0, n)) + GAP.length * (n - 1) > limit) n--;
  // One column left: its text is cut to the terminal (a whole cell wider than that still is not).
  if (n === 1) least[0] = Math.min(least[0]!, limit);
  // A long header (a field's name) is no reason to narrow the text: it gets what is spare.
  const want = columns.slice(0, n).map((_, i) => Math.max(least[i]!, cells.reduce((max, row) => Math.max(max, row[i]!.width), 0)));
  const widths = shareWidths(want, limit, least.slice(0, n));
  topUp(widths, natural, limit);
  if (options.roomToGrow) growInto(widths, limit, columns.map((_, i) => cells.some((row) => !row[i]!.whole)));
  return { columns: columns.slice(0, n), widths, color, limit, left: columns.slice(n).map((c) => c.header) };
}

/** What the terminal has spare widens columns whose header was cut, up to their natural width. */
function topUp(widths: number[], natural: readonly number[], total: number): void {
  let spare = total - sum(widths) - GAP.length * (widths.length - 1);
  for (let i = 0; i < widths.length && spare > 0; i++) {
    const extra = Math.min(spare, natural[i]! - widths[i]!);
    if (extra > 0) [widths[i], spare] = [widths[i]! + extra, spare - extra];
  }
}

/**
 * Widths set by a first page leave later, longer text some room: what the terminal has spare
 * is shared out between the columns of text, each growing at most to twice its width. (A
 * longer number is printed whole anyway, the row's later spare room taking up the push.)
 */
function growInto(widths: number[], total: number, grows: readonly boolean[]): void {
  let spare = total - sum(widths) - GAP.length * (widths.length - 1);
  const growing = widths.filter((_, i) => grows[i]).length;
  const each = Math.floor(spare / Math.max(1, growing));
  for (let i = 0; i < widths.length && spare > 0; i++) {
    if (!grows[i]) continue;
    const extra = Math.min(widths[i]!, each, spare);
    widths[i]! += extra;
    spare -= extra;
  }
}
