import { Option } from 'commander';
import { FORMATS } from '../../core/format-names.js';
import { cacheTtl, fieldList, namedValue, nonEmpty, nonNegativeInt, positiveInt, waitDuration } from './parsers.js';

// The options several commands share, built as lists for their definitions.

/** The options that shape records, shared by every command that prints them and by `sgq fmt`. */
export function shapeOptions(): Option[] {
  return [
    new Option('-o, --output <format>', `${FORMATS.join(', ')} (default: from the extension of --out FILE, else table on a terminal, else ndjson)`).choices(FORMATS),
    new Option('--fields <list>', 'comma-separated fields to print, in this order; user.username reaches into nested objects').argParser(fieldList),
    new Option('--no-header', 'csv and tsv: leave out the header line (to append to a file that has one)'),
    wideOption(),
    bigintOption(),
    new Option('--no-pager', 'on a terminal, print directly instead of through the pager (SGQ_PAGER, PAGER, less -FRX)'),
    new Option('--jq <expr>', 'run a jq filter over each record: strings print raw, other results as compact JSON').conflicts(['output', 'fields']),
    new Option('--slurp', 'with --jq, run the filter once over the array of all records'),
    new Option('--arg <name> <value>', 'with --jq, $name is the string value').argParser(namedValue('--arg', false)),
    new Option('--argjson <name> <json>', 'with --jq, $name is the JSON value').argParser(namedValue('--argjson', true)),
  ];
}

/** Shapes, and where records go: the options of every command that fetches them. */
export function outputOptions(summary: boolean): Option[] {
  return [
    ...shapeOptions(),
    new Option('--raw', 'print each response body as received, one per line').conflicts(['output', 'fields', 'limit', 'jq', 'wide']),
    new Option('--out <file>', 'write to FILE, replaced only when the run succeeds').argParser(nonEmpty('--out')),
    waitLockOption(),
    ...(summary ? [new Option('--summary <format>', 'with json, the run summary as one JSON object on stderr').choices(['text', 'json'])] : []),
  ];
}

export function limitOptions(): Option[] {
  return [
    new Option('--limit <n>', 'stop after exactly N records').argParser(positiveInt('--limit')),
    new Option('--max-credits <n>', 'stop before the credits spent would pass N').argParser(nonNegativeInt('--max-credits')),
    new Option('--dry-run', 'print the requests and the worst-case credits on stderr; send nothing'),
    new Option('--cache <ttl>', 'reuse a successful answer kept less than TTL ago (30m, 1h, 7d): no request, no credit').argParser(cacheTtl),
    new Option('--max-wait <duration>', 'wait out a rate limit (429) of up to this long (5m, 1h): a Retry-After past the 60s sgq waits by itself, or the hour of a trial limit').argParser(waitDuration),
    new Option('--trace <file>', 'write every exchange (headers, status, sizes, timings; key masked) to FILE as NDJSON').argParser(nonEmpty('--trace')),
  ];
}

export const snapshotDirOption = (): Option =>
  new Option('--snapshot-dir <dir>', 'where snapshots are kept (default: $XDG_DATA_HOME/sgq/snapshots)').argParser(nonEmpty('--snapshot-dir'));

/** `-o` and `--fields` of the commands that print a few fixed formats (diff, snapshots list). */
export function simpleShapeOptions(): Option[] {
  return [
    new Option('-o, --output <format>', 'table, json, ndjson or csv (default: table on a terminal, else ndjson)').choices(FORMATS),
    new Option('--fields <list>', 'comma-separated fields to print, in this order').argParser(fieldList),
  ];
}

/** `--wide`: the table's every field, where it would show a few columns chosen for reading. */
export const wideOption = (): Option =>
  new Option('--wide', 'table: every field as a column, nothing cut (default: a few columns chosen for reading)').conflicts(['fields', 'jq']);

/** `--bigint-as-string`: for readers that round integers past 2^53 (jq 1.6). */
export const bigintOption = (): Option =>
  new Option('--bigint-as-string', 'json, ndjson, yaml: write integers past ±2^53 as strings, for jq 1.6 (setting bigint-as-string)').conflicts(['raw', 'jq']);

/** `--wait-lock`: every command that replaces an --out file (or a state file) may wait for another run on it. */
export const waitLockOption = (): Option =>
  new Option('--wait-lock <duration>', 'wait up to this long (30s, 5m) for another run using the same --out or state file').argParser(waitDuration);

/** `--dataset`: every route command may append its records to a Parquet dataset. */
export const datasetOption = (): Option =>
  new Option('--dataset <dir>', 'also append the records (and --changes) to the Parquet dataset in DIR (default: the dataset setting; see docs/dataset.md)').argParser(nonEmpty('--dataset'));
