// The output format names alone, so the command tree can offer them without loading the formatters.
export const FORMATS = ['table', 'json', 'ndjson', 'csv', 'tsv', 'yaml', 'yaml-stream', 'parquet'] as const;
export type Format = (typeof FORMATS)[number];

/** The formats a file name's extension stands for; the first is written when -o is not given. */
const EXTENSIONS: Readonly<Record<string, readonly Format[]>> = {
  ndjson: ['ndjson'],
  jsonl: ['ndjson'],
  json: ['json'],
  csv: ['csv'],
  tsv: ['tsv'],
  yaml: ['yaml', 'yaml-stream'],
  yml: ['yaml', 'yaml-stream'],
  parquet: ['parquet'],
};

/** The formats the extension of `file` names (`jack.JSON` → json), or none. */
export function formatsOfFile(file: string): readonly Format[] | undefined {
  const m = /\.([^./\\]+)$/.exec(file);
  const extension = m?.[1]!.toLowerCase();
  return extension !== undefined && Object.hasOwn(EXTENSIONS, extension) ? EXTENSIONS[extension] : undefined;
}
