import { usageError } from '../../core/errors.js';
import { bigIntegersAsStrings } from '../../core/big-integers.js';
import type { JsonObject } from '../../core/classify.js';
import { stringifyJson } from '../../core/json.js';
import { CSV, TSV, delimitedFormatter } from './delimited.js';
import { projection } from './fields.js';
import type { Sink } from '../output/sink.js';

import { formatsOfFile, type Format } from '../../core/format-names.js';
import type { ResolvedConfig } from '../../core/config.js';
import type { FormatOptions, Formatter } from './formatter.js';

export type { Format } from '../../core/format-names.js';
export type { FormatOptions, Formatter } from './formatter.js';

// The registry of formats: each format's module knows only the Formatter interface
// (formatter.ts), never this file, so the formats and their registry form no circle.

/** The flags that apply to some formats only. */
interface ShapeFlags {
  header?: boolean;
  wide?: boolean;
  bigintAsString?: boolean;
}

/** What picks a command's format: its flags (-o as given on the command line). */
export interface FormatFlags extends ShapeFlags {
  output?: Format;
  out?: string;
  raw?: boolean;
  jq?: string;
}

/** The formats --bigint-as-string changes: those a reader parses numbers of. */
const BIGINT_FORMATS: readonly Format[] = ['json', 'ndjson', 'yaml'];

/**
 * Chooses the format: -o, then the extension of --out, then the config, then table on a
 * terminal and NDJSON in a pipe or file; checks the flags of one format against it. An -o
 * that the extension contradicts wins, with a warning: `--out x.json -o csv` is most likely a slip.
 */
export function chooseFormat(flags: FormatFlags, config: Pick<ResolvedConfig, 'output'>, stdoutIsTTY: boolean, warn?: (line: string) => void): Format {
  // --raw and --jq write no format: a name cannot choose one for them.
  const named = flags.out === undefined || flags.raw || flags.jq !== undefined ? undefined : formatsOfFile(flags.out);
  if (flags.output && named && !named.includes(flags.output)) {
    warn?.(`-o ${flags.output} writes ${flags.output} into ${flags.out}, whose extension says ${named[0]}; rename the file, or leave out -o to write ${named[0]}`);
  }
  return checkShapeFlags(flags.output ?? named?.[0] ?? (config.output as Format | undefined) ?? (stdoutIsTTY && !flags.out ? 'table' : 'ndjson'), flags);
}

/** `format`, once the flags of one format (--no-header, --wide) are found to be its. */
export function checkShapeFlags(format: Format, flags: ShapeFlags): Format {
  if (flags.header === false && format !== 'csv' && format !== 'tsv') throw usageError(`--no-header is for -o csv or tsv, not ${format}`);
  if (flags.wide && format !== 'table') throw usageError(`--wide is for -o table, not ${format}`, 'add -o table, or name the fields with --fields');
  // Given on the command line only: the setting applies where it can and is no error elsewhere.
  if (flags.bigintAsString && !BIGINT_FORMATS.includes(format)) throw usageError(`--bigint-as-string is for json, ndjson and yaml, not ${format}`, 'add -o ndjson; csv, tsv and the table write every digit anyway');
  return format;
}

/** The width a table shares between its columns: a terminal's, never a pipe's or a file's. */
export function terminalWidth(io: { stdoutIsTTY: boolean; stdout: unknown }): number | undefined {
  const columns = (io.stdout as { columns?: number }).columns;
  return io.stdoutIsTTY && columns !== undefined && columns > 0 ? columns : undefined;
}

/**
 * The formatter of `format`, after loading what only that format needs (the others never pay
 * for it): --jq's machinery and Parquet's encoder set up tables at load, which a one-page run
 * would otherwise run at every start.
 */
export async function createFormatter(format: Format, sink: Sink, options: FormatOptions = {}): Promise<Formatter> {
  if (options.jq) {
    const { jqFormatter, loadJqFilter } = await import('../jq/jq.js');
    return jqFormatter(await loadJqFilter(options.jq), options.jq, sink, options.signal);
  }
  if (format === 'parquet' && !options.toFile) throw usageError('-o parquet writes a file, not a stream', 'add --out FILE.parquet');
  const { fields, warn } = options;
  const inner = await formatFor(format, sink, options);
  const bigints = options.bigintAsString === true && BIGINT_FORMATS.includes(format);
  if (!fields && !bigints) return inner;
  const { project, end } = projection(fields, warn);
  // Only a page parsed losslessly can hold an integer past 2^53 (json.ts keeps it as a RawNumber).
  const shaped = (records: readonly JsonObject[], lossless?: boolean) => (bigints && lossless !== false ? records.map((r) => bigIntegersAsStrings(project(r))) : fields ? records.map(project) : records);
  return {
    holdsUntilEnd: inner.holdsUntilEnd,
    write(records, lossless) {
      return inner.write(shaped(records, lossless), lossless);
    },
    end() {
      const done = inner.end();
      end();
      return done;
    },
    get columns() {
      return inner.columns;
    },
    get headerWritten() {
      return inner.headerWritten;
    },
  };
}

/**
 * Records reach these already projected onto `--fields`. The table's, YAML's and Parquet's
 * modules load only when chosen: their setup would cost every other run.
 */
async function formatFor(format: Format, sink: Sink, options: FormatOptions): Promise<Formatter> {
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
      return (await import('./yaml.js')).yamlFormatter(sink);
    case 'yaml-stream':
      return (await import('./yaml.js')).yamlStreamFormatter(sink);
    case 'parquet':
      return parquetFor(sink, options);
    case 'table':
      return (await import('./table-format.js')).tableFormatter(sink, options.fields, { width: options.width, color: options.color, wide: options.wide }, options.warn);
  }
}

/** Parquet: a route's records in the columns its description declares; anything else typed by its first row group. */
async function parquetFor(sink: Sink, { fields, warn, routeRecords }: FormatOptions): Promise<Formatter> {
  const [{ parquetFormatter }, { outputSchema }] = await Promise.all([import('./parquet.js'), import('../../parquet/declared.js')]);
  return parquetFormatter(sink, { fields, warn, declared: routeRecords && outputSchema(routeRecords.records, routeRecords.queryUser) });
}
