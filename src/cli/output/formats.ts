import type { JsonObject } from '../../core/classify.js';
import { RawNumber, stringifyJson, type Json } from '../../core/json.js';
import type { Sink } from './sink.js';

import type { Format } from '../../core/format-names.js';

export type { Format } from '../../core/format-names.js';

/** One streaming interface for every format: records go in page by page, `end` closes the document. */
export interface Formatter {
  /** `lossless` says the records may hold RawNumbers; without it the native serializer is exact. */
  write(records: readonly JsonObject[], lossless?: boolean): void;
  end(): void;
  /** csv: the columns in use once known, so that a resume can write the same ones. */
  readonly columns?: readonly string[];
  /** csv: whether the header line was written (a resume that appends must not repeat it). */
  readonly headerWritten?: boolean;
}

export interface FormatOptions {
  /** csv: `--no-header` (for appending to a file that has one). */
  header?: boolean;
}

/** `--fields a,b`: those keys, in that order, null where a record lacks one. */
function selectFields(record: JsonObject, fields: readonly string[]): JsonObject {
  const out: JsonObject = {};
  for (const f of fields) out[f] = record[f] ?? null;
  return out;
}

export function createFormatter(format: Format, sink: Sink, fields?: readonly string[], warn?: (line: string) => void, options: FormatOptions = {}): Formatter {
  const project = fields ? (r: JsonObject) => selectFields(r, fields) : (r: JsonObject) => r;
  switch (format) {
    case 'ndjson':
      return {
        write(records, lossless = true) {
          if (records.length === 0) return;
          const text = lossless ? stringifyJson : JSON.stringify;
          let out = '';
          for (const r of records) out += `${text(project(r))}\n`;
          sink.write(out);
        },
        end() {},
      };
    case 'json': {
      let first = true;
      return {
        write(records, lossless = true) {
          if (records.length === 0) return;
          const text = lossless ? stringifyJson : JSON.stringify;
          let out = first ? '[\n' : ',\n';
          out += records.map((r) => text(project(r))).join(',\n');
          first = false;
          sink.write(out);
        },
        end() {
          sink.write(first ? '[]\n' : '\n]\n');
        },
      };
    }
    case 'csv':
      return csvFormatter(sink, fields, warn, options.header ?? true);
    case 'table':
      return tableFormatter(sink, fields);
  }
}

/** Text of one value in a cell: strings as they are, nested values as JSON, null as empty. */
function cellText(value: Json | undefined): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || value instanceof RawNumber) return String(value);
  return stringifyJson(value);
}

/** Keys in first-seen order over the given records. */
function unionKeys(records: readonly JsonObject[]): string[] {
  const keys = new Set<string>();
  for (const r of records) for (const k of Object.keys(r)) keys.add(k);
  return [...keys];
}

const NEEDS_QUOTES = /[",\r\n]|^\s|\s$/;
const csvCell = (value: Json | undefined): string => {
  const text = cellText(value);
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
};

/**
 * One CSV line of `valueOf` each column. Built by concatenation rather than map and join: an
 * export formats millions of cells, and the arrays were most of the formatter's time.
 */
function csvRow(columns: readonly string[], valueOf: (column: string) => Json | undefined): string {
  let text = '';
  for (let i = 0; i < columns.length; i++) text += (i === 0 ? '' : ',') + csvCell(valueOf(columns[i]!));
  return `${text}\r\n`;
}

/**
 * RFC 4180: CRLF line ends, quotes doubled. The header is `--fields`, or the keys of the
 * first page (a stream cannot go back to widen its header); a key first seen later is
 * reported once on stderr. `header` false leaves the header line out (`--no-header`).
 */
function csvFormatter(sink: Sink, fields: readonly string[] | undefined, warn: ((line: string) => void) | undefined, header: boolean): Formatter {
  // The header's keys, and those already reported as left out.
  const seen = new Set<string>(fields);
  let started = false;
  const formatter = {
    columns: fields,
    headerWritten: false,
    start() {
      if (started) return;
      started = true;
      if (header && formatter.columns) {
        sink.write(csvRow(formatter.columns, (column) => column));
        formatter.headerWritten = true;
      }
    },
    write(records: readonly JsonObject[]) {
      if (records.length === 0) return;
      if (!formatter.columns) {
        formatter.columns = unionKeys(records);
        for (const c of formatter.columns) seen.add(c);
      }
      formatter.start();
      const columns = formatter.columns;
      let out = '';
      for (const r of records) {
        if (!fields) {
          for (const k in r) {
            if (seen.has(k)) continue;
            seen.add(k);
            warn?.(`csv: column "${k}" first appeared after the header was written and is left out; name it in --fields to keep it`);
          }
        }
        out += csvRow(columns, (column) => r[column]);
      }
      sink.write(out);
    },
    end() {
      formatter.start();
    },
  };
  return formatter;
}

/** A table must see every row to size its columns, so it is the one format that buffers. */
function tableFormatter(sink: Sink, fields: readonly string[] | undefined): Formatter {
  const rows: JsonObject[] = [];
  return {
    write(records) {
      rows.push(...records);
    },
    end() {
      if (rows.length === 0) return;
      const columns = fields ?? unionKeys(rows);
      sink.write(renderTable(columns, rows));
    },
  };
}

// cli-table3 is loaded with the table format only; the other formats never pay for it.
let TableClass: typeof import('cli-table3') | undefined;
export async function loadTable(): Promise<void> {
  TableClass ??= (await import('cli-table3')).default;
}

function renderTable(columns: readonly string[], rows: readonly JsonObject[]): string {
  if (!TableClass) throw new Error('loadTable() must run before a table is rendered');
  const table = new TableClass({ head: [...columns], style: { head: [], border: [] } });
  for (const r of rows) table.push(columns.map((c) => cellText(r[c])));
  return `${table.toString()}\n`;
}
