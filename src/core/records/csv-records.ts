import type { FileHandle } from 'node:fs/promises';
import { stringifyJson, type Json } from '../json.js';
import { LineTooLong, MAX_LINE_CHARS } from './lines.js';

// CSV as sgq writes it (RFC 4180: quotes doubled, fields may hold line breaks) back into
// one JSON line per row, so that a CSV export can be diffed like an NDJSON one. Every value
// comes back as a string (an empty cell as null): CSV does not keep types.

/** Whether an export is CSV: by its name (a handle, a stored snapshot, never is). */
export const isCsvName = (source: string | FileHandle) => typeof source === 'string' && /\.csv(\.gz)?$/i.test(source);

/** JSON lines of the rows of a CSV text, keyed by its header row. */
export async function* csvRecordLines(chunks: AsyncIterable<string>): AsyncGenerator<string[]> {
  let header: string[] | undefined;
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  // After a closing quote: a doubled quote continues the cell.
  let afterQuote = false;
  let batch: string[] = [];
  // A row's length and number, to refuse one past MAX_LINE_CHARS before it fills memory.
  let rowChars = 0;
  let rows = 0;
  const endRow = () => {
    rows++;
    rowChars = 0;
    row.push(cell);
    cell = '';
    if (!header) header = row;
    else if (!(row.length === 1 && row[0] === '')) batch.push(toLine(header, row));
    row = [];
  };
  for await (const text of chunks) {
    for (let i = 0; i < text.length; i++) {
      const c = text[i]!;
      if (++rowChars > MAX_LINE_CHARS) throw new LineTooLong(rows + 1, 'row');
      if (quoted) {
        if (c === '"') {
          quoted = false;
          afterQuote = true;
        } else cell += c;
        continue;
      }
      if (c === '"') {
        if (afterQuote) cell += '"';
        quoted = true;
        afterQuote = false;
        continue;
      }
      afterQuote = false;
      if (c === ',') {
        row.push(cell);
        cell = '';
      } else if (c === '\n') endRow();
      else if (c !== '\r') cell += c;
    }
    if (batch.length) {
      yield batch;
      batch = [];
    }
  }
  if (cell !== '' || row.length) endRow();
  if (batch.length) yield batch;
}

function toLine(header: readonly string[], row: readonly string[]): string {
  const record: Record<string, Json> = {};
  header.forEach((column, i) => {
    const value = row[i];
    record[column] = value === undefined || value === '' ? null : value;
  });
  return stringifyJson(record);
}
