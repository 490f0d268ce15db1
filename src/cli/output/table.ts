import type { JsonObject } from '../../core/classify.js';
import type { Json } from '../../core/json.js';
import { cellText } from './delimited.js';

const GAP = '  ';
// Control characters (C0 and DEL), which would break a row or move the cursor.
// eslint-disable-next-line no-control-regex -- matching them is the point
const CONTROL = /[\u0000-\u001f\u007f]/g;
const ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * What a person reads in a cell: `null` apart from an empty string (`""`), a key the record
 * lacks as nothing, nested values as compact JSON, and control characters escaped so that a
 * row stays on one line.
 */
export function tableCell(value: Json | undefined): string {
  if (value === undefined) return '';
  if (value === null) return 'null';
  if (value === '') return '""';
  return cellText(value).replace(CONTROL, (c) => ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

// Widths count code points: close enough for the names, dates and numbers of the service.
const widthOf = (text: string): number => [...text].length;

/** The text cut to `width` code points, its end replaced by `…` when it was longer. */
function fit(text: string, width: number): string {
  const points = [...text];
  if (points.length <= width) return text;
  return width <= 0 ? '' : `${points.slice(0, width - 1).join('').trimEnd()}…`;
}

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

/**
 * A header line and one line per record, columns two spaces apart, no rules: a page of 500
 * records is 501 lines. With `width` (a terminal's), the columns share it and long cells are
 * cut with `…`.
 */
export function renderTable(columns: readonly string[], rows: readonly JsonObject[], width?: number): string {
  const cells = rows.map((r) => columns.map((c) => tableCell(r[c])));
  const natural = columns.map((c, i) => cells.reduce((max, row) => Math.max(max, widthOf(row[i]!)), widthOf(c)));
  const widths = shareWidths(natural, width);
  const line = (values: readonly string[]) =>
    values
      .map((v, i) => {
        const text = fit(v, widths[i]!);
        return i === values.length - 1 ? text : text + ' '.repeat(widths[i]! - widthOf(text));
      })
      .join(GAP)
      .trimEnd();
  let out = `${line(columns)}\n`;
  for (const row of cells) out += `${line(row)}\n`;
  return out;
}
