import { unionKeys, type JsonObject } from '../../core/classify.js';
import type { Formatter } from './formatter.js';
import type { Sink } from '../output/sink.js';
import { loadTable, renderRows, renderTable, tableLayout, type TableLayout, type TableOptions } from './table.js';
import { tableColumns } from './table-columns.js';
import { count } from '../../core/words.js';

// `-o table` as a format: the columns, how they share a terminal, and when rows are printed.
// Loaded only by runs that print a table (formats.ts).

/**
 * A table for a file or a pipe sees every row to size its columns, so it buffers. On a
 * terminal (or the pager in front of it) the columns share the screen's width anyway: they
 * are sized by the first page and each page is printed as it comes, so the reader sees the
 * first screen at once and the pager's back-pressure holds back fetching.
 */
export async function tableFormatter(sink: Sink, fields: readonly string[] | undefined, table: TableOptions, warn?: (line: string) => void): Promise<Formatter> {
  await loadTable();
  if (table.width !== undefined) return streamedTable(sink, fields, table, warn);
  const rows: JsonObject[] = [];
  return {
    holdsUntilEnd: true,
    write(records) {
      rows.push(...records);
    },
    end() {
      if (rows.length === 0) return;
      sink.write(renderTable(tableColumns(unionKeys(rows), { fields, wide: table.wide }), rows, table));
    },
  };
}

function streamedTable(sink: Sink, fields: readonly string[] | undefined, table: TableOptions, warn?: (line: string) => void): Formatter {
  let layout: TableLayout | undefined;
  // Every field of the first page is shown (--wide, or records of no known kind): a later one is missed.
  let every: Set<string> | undefined;
  let warned = false;
  return {
    write(records) {
      if (records.length === 0) return;
      const first = layout === undefined;
      if (!layout) {
        const keys = unionKeys(records);
        layout = tableLayout(tableColumns(keys, { fields, wide: table.wide }), records, { ...table, roomToGrow: true });
        if (!fields && keys.every((k) => layout!.columns.some((c) => c.field === k))) every = new Set(keys);
        if (layout.left.length) warn?.(leftOut(layout, table.width!));
      }
      if (!warned && every && !first && records.some((r) => Object.keys(r).some((k) => !every!.has(k)))) {
        warned = true;
        warn?.('table: a column first seen after the first page is not shown; name it in --fields, or use -o ndjson');
      }
      sink.write(renderRows(layout, records, first));
    },
    end() {},
  };
}

/** The one line that says which columns a narrow terminal left out, and how to see them. */
function leftOut(layout: TableLayout, width: number): string {
  return `table: ${count(width, 'column')} ${width === 1 ? 'leaves' : 'leave'} no room for ${layout.left.join(', ')} (numbers, ids and dates are never cut); see every column with --wide, name them in --fields, or widen the terminal`;
}
