import type { JsonObject } from '../../core/classify.js';
import type { RecordsName } from '../../core/record-fields.js';

// What every format implements, apart from the registry that picks one (formats.ts).

/**
 * One streaming interface for every format: records go in page by page, `end` closes the
 * document. A write, an end or a settle may return a promise (--jq waits for its worker
 * thread without blocking the event loop, so a signal is heard): callers await it.
 */
export interface Formatter {
  /** `lossless` says the records may hold RawNumbers; without it the native serializer is exact. */
  write(records: readonly JsonObject[], lossless?: boolean): void | Promise<void>;
  end(): void | Promise<void>;
  /**
   * The records written reach the sink only at `end()` (a table, `--jq --slurp`, Parquet's row
   * groups and footer): until then nothing they hold is durable, whatever the sink says.
   */
  readonly holdsUntilEnd?: boolean;
  /**
   * Hands the sink everything written so far, waiting for it if it must (--jq's worker thread
   * works beside the main thread): called before a checkpoint commits.
   */
  settle?(): void | Promise<void>;
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
  /** json, ndjson and yaml: integers past ±2^53 as strings of their digits (--bigint-as-string). */
  bigintAsString?: boolean;
  /** table: `--wide`, every field as a column and nothing cut, instead of the route's default columns. */
  wide?: boolean;
  /** table: whether sgq's own marks (escapes, null) are shown faint (colour on stdout, as colorLevel decides). */
  color?: boolean;
  /** csv and tsv: stdout is a terminal (not `--out`), where each cell's control characters are escaped (visible.ts). */
  terminal?: boolean;
  /** Whether the output is a file (`--out`): Parquet is never written to stdout. */
  toFile?: boolean;
  /** `--jq`: the filter's results replace the format. */
  jq?: JqOptions;
  /** The route's records, whose description declares Parquet's columns (`query_user` first where records carry it); none for a command with no route. */
  routeRecords?: RouteRecords;
  /** SIGINT or SIGTERM: --jq gives jq a moment to answer what it holds, then ends its thread. */
  signal?: AbortSignal;
}

/** What a route run's records are: their description's name, and whether each carries `query_user`. */
export interface RouteRecords {
  records: RecordsName;
  queryUser: boolean;
}

/** `--jq` and the flags that go with it. */
export interface JqOptions {
  filter: string;
  slurp?: boolean;
  /** `--arg NAME VALUE` and `--argjson NAME JSON`, as pairs in the order given. */
  args?: readonly (readonly [string, string])[];
  argjson?: readonly (readonly [string, string])[];
  /** What the filter writes to stderr itself (`debug`, `stderr`). */
  stderr?: (text: string) => void;
}
