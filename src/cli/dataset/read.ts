import { gunzipSync } from 'node:zlib';
import type { SchemaElement } from 'hyparquet';

// Reading the dataset's own files back (info, compact): hyparquet, loaded by these commands only.

type Hyparquet = typeof import('hyparquet');
let reader: Hyparquet | undefined;
async function load(): Promise<Hyparquet> {
  reader ??= await import('hyparquet');
  return reader;
}

export interface PartFile {
  rows: number;
  schema: SchemaElement[];
  rowGroups: { start: number; end: number }[];
  /** Column types sgq can copy exactly: BOOLEAN, INT64 (timestamps too), DOUBLE and UTF-8 strings. */
  copyable: boolean;
  /** Names and types of the columns: files of one signature merge into one. */
  signature: string;
}

const COPYABLE = new Set(['BOOLEAN', 'INT64', 'DOUBLE', 'BYTE_ARRAY']);

export async function readPartFile(path: string): Promise<PartFile & { file: Awaited<ReturnType<Hyparquet['asyncBufferFromFile']>> }> {
  const { asyncBufferFromFile, parquetMetadataAsync } = await load();
  const file = await asyncBufferFromFile(path);
  const metadata = await parquetMetadataAsync(file);
  const rowGroups: PartFile['rowGroups'] = [];
  let start = 0;
  for (const group of metadata.row_groups) {
    const end = start + Number(group.num_rows);
    rowGroups.push({ start, end });
    start = end;
  }
  const columns = metadata.schema.slice(1);
  return {
    file,
    rows: Number(metadata.num_rows),
    schema: metadata.schema,
    rowGroups,
    copyable: columns.every((c) => c.type !== undefined && COPYABLE.has(c.type) && (c.type !== 'BYTE_ARRAY' || c.converted_type === 'UTF8')),
    signature: columns.map((c) => `${c.name}:${c.type}:${c.converted_type ?? ''}:${c.logical_type?.type ?? ''}`).join(','),
  };
}

/** One row group's values, column by column, as the writer takes them back (timestamps as their microseconds). */
export async function readColumns(part: Awaited<ReturnType<typeof readPartFile>>, group: { start: number; end: number }): Promise<{ name: string; data: unknown[] }[]> {
  const { parquetReadObjects } = await load();
  // sgq writes GZIP pages (src/cli/output/parquet-chunk.ts); hyparquet reads Snappy only by itself.
  const compressors = { GZIP: (input: Uint8Array) => new Uint8Array(gunzipSync(input)) };
  const rows = await parquetReadObjects({ file: part.file, rowStart: group.start, rowEnd: group.end, utf8: true, compressors, parsers: { timestampFromMicroseconds: (micros: bigint) => micros } });
  return part.schema.slice(1).map(({ name }) => ({ name, data: rows.map((r) => r[name] ?? null) }));
}
