import { unionKeys } from '../../core/classify.js';
import { RawNumber, stringifyJson, type Json } from '../../core/json.js';
import type { Formatter } from './formatter.js';
import type { Sink } from '../output/sink.js';
import { visible } from '../terminal/visible.js';

/** Text of one value in a cell: strings as they are, nested values as JSON, null as empty. */
export function cellText(value: Json | undefined): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || value instanceof RawNumber) return String(value);
  return stringifyJson(value);
}

/** How one dialect writes a line: a cell's text, the separator and the line end. */
interface Dialect {
  name: string;
  cell(text: string): string;
  separator: string;
  newline: string;
}

const NEEDS_QUOTES = /[",\r\n]|^\s|\s$/;
/** RFC 4180: CRLF line ends, quotes doubled. */
export const CSV: Dialect = {
  name: 'csv',
  cell: (text) => (NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text),
  separator: ',',
  newline: '\r\n',
};

const TSV_ESCAPES: Record<string, string> = { '\t': '\\t', '\n': '\\n', '\r': '\\r', '\\': '\\\\' };
/** Tab-separated, with tab, line breaks and backslash escaped so that every record is one line. */
export const TSV: Dialect = {
  name: 'tsv',
  cell: (text) => (/[\t\n\r\\]/.test(text) ? text.replace(/[\t\n\r\\]/g, (c) => TSV_ESCAPES[c]!) : text),
  separator: '\t',
  newline: '\n',
};

/**
 * One line of `valueOf` each column. Built by concatenation rather than map and join: an
 * export formats millions of cells, and the arrays were most of the formatter's time.
 */
function row(dialect: Dialect, columns: readonly string[], valueOf: (column: string) => Json | undefined): string {
  let text = '';
  for (let i = 0; i < columns.length; i++) text += (i === 0 ? '' : dialect.separator) + dialect.cell(cellText(valueOf(columns[i]!)));
  return text + dialect.newline;
}

/**
 * The header is `--fields` (`fields`), or the keys of the first page (a stream cannot go back to
 * widen its header); a key first seen later is reported once on stderr. `header: false` leaves
 * the header line out.
 */
export function delimitedFormatter(
  dialect: Dialect,
  sink: Sink,
  options: { fields?: readonly string[]; header?: boolean; warn?: (line: string) => void; terminal?: boolean },
): Formatter {
  const { fields, warn } = options;
  // On a terminal each cell is shown, never obeyed: its control characters escaped after the dialect's own.
  const written: Dialect = options.terminal ? { ...dialect, cell: (text) => visible(dialect.cell(text)) } : dialect;
  let columns: readonly string[] | undefined = fields;
  // The header's keys, and those already reported as left out.
  const seen = new Set<string>(fields);
  let headerWritten = options.header === false;
  const header = () => {
    if (!headerWritten && columns) sink.write(row(written, columns, (column) => column));
    headerWritten = true;
  };
  return {
    write(records) {
      if (records.length === 0) return;
      if (!columns) {
        columns = unionKeys(records);
        for (const c of columns) seen.add(c);
      }
      header();
      let out = '';
      for (const r of records) {
        if (!fields) {
          for (const k in r) {
            if (seen.has(k)) continue;
            seen.add(k);
            warn?.(`${dialect.name}: column "${k}" first appeared after the header was written and is left out; name it in --fields to keep it`);
          }
        }
        out += row(written, columns, (column) => r[column]);
      }
      sink.write(out);
    },
    end() {
      header();
    },
    get columns() {
      return columns;
    },
    // A header left out by --no-header counts as written: a resume must not add one either.
    get headerWritten() {
      return headerWritten;
    },
  };
}
