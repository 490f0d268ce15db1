import type { JsonObject } from '../../core/classify.js';
import { unionKeys } from './delimited.js';
import type { Formatter } from './formatter.js';
import type { Sink } from './sink.js';
import { loadTable, renderRows, renderTable, tableLayout, type TableLayout, type TableOptions } from './table.js';

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
      sink.write(renderTable(fields ?? unionKeys(rows), rows, table));
    },
  };
}

function streamedTable(sink: Sink, fields: readonly string[] | undefined, table: TableOptions, warn?: (line: string) => void): Formatter {
  let layout: TableLayout | undefined;
  let known: Set<string> | undefined;
  let warned = false;
  return {
    write(records) {
      if (records.length === 0) return;
      const first = layout === undefined;
      layout ??= tableLayout(fields ?? unionKeys(records), records, { ...table, roomToGrow: true });
      known ??= new Set(layout.columns);
      if (!warned && !fields && !first && records.some((r) => Object.keys(r).some((k) => !known!.has(k)))) {
        warned = true;
        warn?.('table: a column first seen after the first page is not shown; name it in --fields, or use -o ndjson');
      }
      sink.write(renderRows(layout, records, first));
    },
    end() {},
  };
}
