import { count, grouped } from '../../../core/words.js';
import { cutToWidth, displayWidth, loadTextWidth } from '../../terminal/text-width.js';
import type { HistoryRecord, HistorySeries } from './history-series.js';

// `sgq history` on a terminal: for each user, the count over time as an area of Unicode
// blocks, and under it the gains and losses of each snapshot as bars, all to the terminal's
// width, with the numbers beside them (the count's highest and lowest, the most gained and
// lost at one snapshot, the last snapshot's numbers and the totals). More snapshots than
// columns share a column: its count is the last one's, its gains and losses their sums.

export interface ChartOptions {
  /** The terminal's columns: no line is wider. */
  width: number;
  color: boolean;
}

const BLOCKS = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
const COUNT_ROWS = 6;
const BAR_ROWS = 2;
const COLORS = { count: '36', gained: '32', lost: '31' } as const;

/** What one column of the chart stands for. */
interface Column {
  count: number;
  gained: number;
  lost: number;
}

/** The chart of every series, one after the other; empty when none has a snapshot. */
export async function chartText(series: readonly HistorySeries[], options: ChartOptions): Promise<string> {
  await loadTextWidth();
  const blocks = series.map((s) => chartLines(s, options).join('\n'));
  return blocks.length ? `${blocks.join('\n\n')}\n` : '';
}

/** One series' chart, each line at most `options.width` columns. */
export function chartLines(series: HistorySeries, options: ChartOptions): string[] {
  const { records } = series;
  const list = series.route.endsWith('following') ? 'following' : 'followers';
  if (!records.length) return wrap(`${series.user}, ${list}: no snapshot in the period`, options.width);
  const first = records[0]!;
  const last = records.at(-1)!;
  const title = `${series.user}, ${list}: ${count(records.length, 'snapshot')} from ${day(first.taken_at)} to ${day(last.taken_at)}`;
  const counts = records.map((r) => r.count);
  const hi = Math.max(...counts);
  const lo = Math.min(...counts);
  const most = { gained: Math.max(0, ...records.map((r) => r.gained ?? 0)), lost: Math.max(0, ...records.map((r) => r.lost ?? 0)) };
  const labels = { hi: grouped(hi), lo: grouped(lo), gained: `+${grouped(most.gained)}`, lost: `-${grouped(most.lost)}` };
  // The labels right-aligned, then a space, then the axis.
  const labelWidth = Math.max(...Object.values(labels).map((l) => l.length), 'gained'.length) + 1;
  const plotWidth = options.width - labelWidth - 1;
  const summary = summaryLine(records);
  // Too narrow to draw: the numbers alone.
  if (plotWidth < 4) return [...wrap(title, options.width), ...wrap(summary, options.width)];
  const columns = columnsOf(records, plotWidth);
  const paint = (code: string, text: string) => (options.color && text.trim() !== '' ? `\x1b[${code}m${text}\x1b[39m` : text);
  const row = (label: string, axis: string, cells: string, code: string) => `${label.padStart(labelWidth - 1)} ${axis}${paint(code, cells)}`.trimEnd();
  const lines = wrap(title, options.width);
  const countRows = areaRows(columns.map((c) => c.count), lo, hi, COUNT_ROWS);
  countRows.forEach((cells, i) => lines.push(row(i === 0 ? labels.hi : i === COUNT_ROWS - 1 ? labels.lo : '', i === 0 || i === COUNT_ROWS - 1 ? '┤' : '│', cells, COLORS.count)));
  // Each its own scale, its top labelled with the most gained (or lost) at one snapshot.
  for (const kind of ['gained', 'lost'] as const) {
    barRows(columns.map((c) => c[kind]), Math.max(...columns.map((c) => c[kind])), BAR_ROWS).forEach((cells, i) => lines.push(row(i === 0 ? labels[kind] : kind, i === 0 ? '┤' : '│', cells, COLORS[kind])));
  }
  lines.push(' '.repeat(labelWidth) + axisLine(day(first.taken_at), day(last.taken_at), columns.length));
  lines.push(...wrap(summary, options.width));
  return lines;
}

/** The snapshots spread over at most `width` columns: each snapshot over the same number of columns, or several sharing one. */
function columnsOf(records: readonly HistoryRecord[], width: number): Column[] {
  const n = records.length;
  if (n <= width) {
    // Each snapshot over one or more columns, so that the chart fills the width.
    return Array.from({ length: width }, (_, c) => {
      const r = records[Math.floor((c * n) / width)]!;
      return { count: r.count, gained: r.gained ?? 0, lost: r.lost ?? 0 };
    });
  }
  const out: Column[] = [];
  for (let c = 0; c < width; c++) {
    const from = Math.floor((c * n) / width);
    const to = Math.floor(((c + 1) * n) / width);
    const shared = records.slice(from, Math.max(to, from + 1));
    out.push({ count: shared.at(-1)!.count, gained: sum(shared.map((r) => r.gained ?? 0)), lost: sum(shared.map((r) => r.lost ?? 0)) });
  }
  return out;
}

/** An area: each value's height between `lo` (one eighth of a row) and `hi` (every row), top row first. */
function areaRows(values: readonly number[], lo: number, hi: number, rows: number): string[] {
  const eighths = values.map((v) => (hi === lo ? Math.ceil((rows * 8) / 2) : 1 + Math.round(((v - lo) / (hi - lo)) * (rows * 8 - 1))));
  return rowsOf(eighths, rows);
}

/** Bars from 0 to `top`: any value above 0 shows at least one eighth. */
function barRows(values: readonly number[], top: number, rows: number): string[] {
  return rowsOf(values.map((v) => (v <= 0 || top <= 0 ? 0 : Math.max(1, Math.round((v / top) * rows * 8)))), rows);
}

/** Heights in eighths of a row as `rows` lines of blocks, the top line first. */
function rowsOf(eighths: readonly number[], rows: number): string[] {
  const lines: string[] = [];
  for (let r = rows - 1; r >= 0; r--) {
    let line = '';
    for (const e of eighths) {
      const fill = Math.min(8, e - r * 8);
      line += fill <= 0 ? ' ' : BLOCKS[fill - 1];
    }
    lines.push(line);
  }
  return lines;
}

/** `└2025-11-28 ... 2026-11-27` under the plot's columns (the last date left out when they do not both fit). */
function axisLine(from: string, to: string, width: number): string {
  if (width >= from.length + to.length + 1) return `└${from}${' '.repeat(width - from.length - to.length)}${to}`;
  return `└${cutToWidth(from, width).text}`;
}

/** Words on lines of at most `width` columns; a word longer than a line is cut. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    const joined = line ? `${line} ${word}` : word;
    if (displayWidth(joined) <= width) line = joined;
    else {
      if (line) lines.push(line);
      line = cutToWidth(word, width).text;
    }
  }
  if (line) lines.push(line);
  return lines;
}

/** The last snapshot's numbers and the totals of the period. */
function summaryLine(records: readonly HistoryRecord[]): string {
  const last = records.at(-1)!;
  const change = last.gained === null ? 'first snapshot' : `+${grouped(last.gained)} -${grouped(last.lost ?? 0)}`;
  const gained = sum(records.map((r) => r.gained ?? 0));
  const lost = sum(records.map((r) => r.lost ?? 0));
  return `last ${grouped(last.count)} (${change}) at ${last.taken_at.slice(0, 16).replace('T', ' ')} UTC; in all +${grouped(gained)} -${grouped(lost)}`;
}

const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);
const day = (iso: string): string => iso.slice(0, 10);
