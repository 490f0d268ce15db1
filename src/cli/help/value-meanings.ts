import { SETTINGS, type SettingName } from '../../core/config.js';
import type { Format } from '../../core/format-names.js';
import type { MalformedKind } from '../../sandbox/fault-kinds.js';
import type { Shape } from '../../sandbox/shapes.js';
import { SCHEMA_TITLES, type SchemaName } from '../commands/describe/schemas.js';

// What each value of a fixed list means: a format, a setting, a shell. `sgq help formats`,
// `sgq describe` and the completion scripts (fish and zsh show a description per value) all
// read these tables. The Record types make a new format, setting or kind fail to compile
// until it says what it is.

export const FORMAT_DESCRIPTIONS: Record<Format, string> = {
  table: 'aligned columns for reading (the default on a terminal; holds records until the end)',
  json: 'one array of every record, streamed page by page',
  ndjson: 'one JSON record a line, written as pages arrive (the default into a pipe or file)',
  csv: 'RFC 4180 with a header line (--no-header leaves it out); nested values as JSON',
  tsv: 'tab-separated, one line a record; tab, line break and backslash escaped',
  yaml: 'one YAML document, the list of every record, written as pages arrive',
  'yaml-stream': 'a YAML stream, one document (---) a record',
  parquet: 'columnar file for DuckDB, Spark and others; only with --out FILE',
};

/** `text` or `json`, as `--summary` and `config list -o` take them. */
const TEXT_OR_JSON = { text: 'lines of text for people (the default)', json: 'one JSON document for programs' } as const;

const SHELL_DESCRIPTIONS = { bash: 'bash 4 or later', zsh: 'zsh, from $fpath or sourced', fish: 'fish' } as const;

const MALFORMED_DESCRIPTIONS: Record<MalformedKind, string> = {
  html: 'an HTML error page',
  truncated: 'JSON cut off halfway',
  text: 'a line of plain text',
  'data-object': 'data is an object, not a list',
  'bad-page': 'next_page is not a number',
  huge: 'a body of millions of records',
  'page-back': 'from page 2, next_page points back to page 1',
  'page-repeat': 'from page 2, next_page names the page itself',
  'page-empty': 'from page 2, empty pages that never end',
  'page-ignored': "page 1's records on every page asked",
  'page-items': 'page_items one more than the records sent',
};

const SHAPE_DESCRIPTIONS: Record<Shape, string> = {
  service: "the service's records: follower_username, follower_userid, … (the default)",
  spec: "the spec's two-field example: username, last_checked",
};

const settingDescriptions = Object.fromEntries(Object.entries(SETTINGS).map(([name, s]) => [name, s.describe])) as Record<SettingName, string>;
const schemaDescriptions = Object.fromEntries(Object.entries(SCHEMA_TITLES).map(([name, title]) => [name, `JSON Schema of ${title}`])) as Record<SchemaName, string>;

/** Every table of values; a list of choices takes its descriptions from the first that holds them all. */
const VOCABULARIES: readonly Readonly<Record<string, string>>[] = [
  FORMAT_DESCRIPTIONS,
  TEXT_OR_JSON,
  schemaDescriptions,
  settingDescriptions,
  SHELL_DESCRIPTIONS,
  MALFORMED_DESCRIPTIONS,
  SHAPE_DESCRIPTIONS,
];

/**
 * The description of each of `words` (the choices of an option or argument), from the first
 * table that describes them all; undefined when none does.
 */
export function valueDescriptions(words: readonly string[]): Readonly<Record<string, string>> | undefined {
  return VOCABULARIES.find((table) => words.every((w) => Object.hasOwn(table, w)));
}
