// The output format names alone, so the command tree can offer them without loading the formatters.
export const FORMATS = ['table', 'json', 'ndjson', 'csv', 'tsv', 'yaml', 'yaml-stream', 'parquet'] as const;
export type Format = (typeof FORMATS)[number];
