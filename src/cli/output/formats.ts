import type { JsonObject } from '../../core/classify.js';
import { usageError } from '../../core/errors.js';
import { stringifyJson } from '../../core/json.js';
import { CSV, TSV, delimitedFormatter, unionKeys } from './delimited.js';
import { projection } from './fields.js';
import { loadParquet, parquetFormatter } from './parquet.js';
import { jqFormatter, loadJqFilter, type JqOptions } from './jq.js';
import type { Sink } from './sink.js';
import { renderTable } from './table.js';
import { loadYaml, yamlFormatter } from './yaml.js';

import type { Format } from '../../core/format-names.js';

export type { Format } from '../../core/format-names.js';

/** One streaming interface for every format: records go in page by page, `end` closes the document. */
export interface Formatter {
  /** `lossless` says the records may hold RawNumbers; without it the native serializer is exact. */
  write(records: readonly JsonObject[], lossless?: boolean): void;
  end(): void;
  /** csv and tsv: the columns in use once known, so that a resume can write the same ones. */
  readonly columns?: readonly string[];
  /** csv and tsv: whether the header line was written (a resume that appends must not repeat it). */
  readonly headerWritten?: boolean;
}

export interface FormatOptions {
  /** `--fields`: names or dotted paths, in this order. */
  fields?: readonly string[];
  /** csv and tsv: false leaves the header line out (`--no-header`). */
  header?: boolean;
  /** A line for stderr. */
  warn?: (line: string) => void;
  /** table: the terminal's width, which the columns share; none for a pipe or a file. */
  width?: number;
  /** Whether the output is a file (`--out`): Parquet is never written to stdout. */
  toFile?: boolean;
  /** `--jq`: the filter's results replace the format. */
  jq?: JqOptions;
}

/** The width a table shares between its columns: a terminal's, never a pipe's or a file's. */
export function terminalWidth(io: { stdoutIsTTY: boolean; stdout: unknown }): number | undefined {
  const columns = (io.stdout as { columns?: number }).columns;
  return io.stdoutIsTTY && columns !== undefined && columns > 0 ? columns : undefined;
}

/** The formatter of `format`, after loading what only that format needs (the others never pay for it). */
export async function createFormatter(format: Format, sink: Sink, options: FormatOptions = {}): Promise<Formatter> {
  if (options.jq) return jqFormatter(await loadJqFilter(options.jq), options.jq, sink);
  if (format === 'yaml') await loadYaml();
  if (format === 'parquet') {
    if (!options.toFile) throw usageError('-o parquet writes a file, not a stream', 'add --out FILE.parquet');
    await loadParquet();
  }
  const { fields, warn } = options;
  const inner = formatFor(format, sink, options);
  if (!fields) return inner;
  const { project, end } = projection(fields, warn);
  return {
    write(records, lossless) {
      inner.write(records.map(project), lossless);
    },
    end() {
      inner.end();
      end();
    },
    get columns() {
      return inner.columns;
    },
    get headerWritten() {
      return inner.headerWritten;
    },
  };
}

/** Records reach these already projected onto `--fields`. */
function formatFor(format: Format, sink: Sink, options: FormatOptions): Formatter {
  switch (format) {
    case 'ndjson':
      return {
        write(records, lossless = true) {
          if (records.length === 0) return;
          const text = lossless ? stringifyJson : JSON.stringify;
          let out = '';
          for (const r of records) out += `${text(r)}\n`;
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
          out += records.map((r) => text(r)).join(',\n');
          first = false;
          sink.write(out);
        },
        end() {
          sink.write(first ? '[]\n' : '\n]\n');
        },
      };
    }
    case 'csv':
      return delimitedFormatter(CSV, sink, options);
    case 'tsv':
      return delimitedFormatter(TSV, sink, options);
    case 'yaml':
      return yamlFormatter(sink);
    case 'parquet':
      return parquetFormatter(sink, options.fields, options.warn);
    case 'table':
      return tableFormatter(sink, options.fields, options.width);
  }
}

/** A table must see every row to size its columns, so it is the one format that buffers. */
function tableFormatter(sink: Sink, fields: readonly string[] | undefined, width: number | undefined): Formatter {
  const rows: JsonObject[] = [];
  return {
    write(records) {
      rows.push(...records);
    },
    end() {
      if (rows.length === 0) return;
      sink.write(renderTable(fields ?? unionKeys(rows), rows, width));
    },
  };
}
