import type { JsonObject } from '../../core/classify.js';
import { fit, headerCell, paint, shownCell, widthOf, type Shown } from './table-cells.js';
import { tableColumns, type TableColumn } from './table-columns.js';
import { CUT_MIN, GAP, layoutOf, type TableLayout, type TableOptions } from './table-layout.js';
import { loadTextWidth } from '../terminal/text-width.js';

export { loadTextWidth as loadTable };
export { tableCell } from './table-cells.js';
export { shareWidths, type TableLayout, type TableOptions } from './table-layout.js';

/** Columns as TableColumns, or as field names shown under their own name. */
type Columns = readonly (string | TableColumn)[];
const columnsOf = (columns: Columns): TableColumn[] => {
  const named = columns.filter((c): c is string => typeof c === 'string');
  const plain = named.length ? new Map(tableColumns(named, { fields: named }).map((c) => [c.field, c])) : undefined;
  return columns.map((c) => (typeof c === 'string' ? plain!.get(c)! : c));
};

const cellsOf = (columns: readonly TableColumn[], rows: readonly JsonObject[], color: boolean): Shown[][] => rows.map((r) => columns.map((c) => shownCell(c, r[c.field], color)));

/**
 * The layout of `columns` over `rows` (the header's widths included): with a terminal's
 * width they share it, and columns that would cut a number are left out (`left`). Needs
 * `loadTable()` first.
 */
export function tableLayout(columns: Columns, rows: readonly JsonObject[], options: TableOptions & { roomToGrow?: boolean } = {}): TableLayout {
  const all = columnsOf(columns);
  return layoutOf(all, all.map(headerCell), cellsOf(all, rows, options.color === true), options);
}

/** The lines of `rows` in `layout`, after the header line when asked. */
export function renderRows(layout: TableLayout, rows: readonly JsonObject[], withHeader: boolean): string {
  return linesOf(layout, cellsOf(layout.columns, rows, layout.color), withHeader);
}

/**
 * A header line and one line per record, columns two spaces apart, no rules: a page of 500
 * records is 501 lines. Columns are as wide as their widest cell on a terminal's screen;
 * with `width`, they share it: text is cut with `…`, and a column that would cut a number is
 * left out. Needs `loadTable()` first.
 */
export function renderTable(columns: Columns, rows: readonly JsonObject[], options: TableOptions = {}): string {
  const all = columnsOf(columns);
  // Each cell worked out once, for the widths and for the lines.
  const cells = cellsOf(all, rows, options.color === true);
  return linesOf(layoutOf(all, all.map(headerCell), cells, options), cells, true);
}

function linesOf(layout: TableLayout, cells: readonly (readonly Shown[])[], withHeader: boolean): string {
  let out = withHeader ? `${lineText(layout, layout.columns.map(headerCell))}\n` : '';
  for (const row of cells) out += `${lineText(layout, row)}\n`;
  return out;
}

/** A row's line; one whose whole cells push it past the terminal cuts its text further. */
function lineText(layout: TableLayout, row: readonly Shown[]): string {
  const first = lineOf(layout, row, layout.widths);
  if (layout.limit === undefined || first.debt === 0) return first.text;
  const spare = layout.limit - layout.widths.reduce((a, b) => a + b, 0) - GAP.length * (layout.widths.length - 1);
  return first.debt <= spare ? first.text : lineOf(layout, row, squeezed(layout.widths, row, first.debt - spare)).text;
}

/** Widths for one row: `excess` columns taken from its text cells, the widest first. */
function squeezed(widths: readonly number[], row: readonly Shown[], excess: number): number[] {
  const out = [...widths];
  const text = out.map((_, i) => i).filter((i) => !row[i]!.whole).sort((a, b) => out[b]! - out[a]!);
  for (const i of text) {
    const take = Math.min(excess, Math.max(0, out[i]! - CUT_MIN));
    out[i]! -= take;
    excess -= take;
  }
  return out;
}

/**
 * One line: text cut to its column (on a terminal), whole cells as they are. A whole cell
 * wider than its column pushes what follows to the right until a later cell's spare room
 * takes the push up (`debt`: how far the line's end is pushed).
 */
function lineOf(layout: TableLayout, row: readonly Shown[], widths: readonly number[]): { text: string; debt: number } {
  const { columns, color, limit } = layout;
  const last = widths.length - 1;
  let text = '';
  let debt = 0;
  for (let i = 0; i <= last; i++) {
    const cell = row[i]!;
    const w = widths[i]!;
    const cut = limit !== undefined && !cell.whole && cell.width > w;
    const pieces = cut ? fit(cell.pieces, w, cell.width) : cell.pieces;
    const width = cut ? widthOf(pieces) : cell.width;
    const room = Math.max(width, w - debt);
    debt += room - w;
    const pad = ' '.repeat(room - width);
    const painted = paint(pieces, color);
    text += (i === 0 ? '' : GAP) + (columns[i]!.right ? pad + painted : i === last ? painted : painted + pad);
  }
  return { text: text.replace(/ +$/, ''), debt };
}
