import { closeSync, openSync, readSync } from 'node:fs';
import type { FileMetaData, SchemaElement } from 'hyparquet';

// Reading the dataset's own files back (info, compact): their footers only, through hyparquet,
// loaded by these commands only. No value is decoded: compaction copies column chunks as bytes.

type Hyparquet = typeof import('hyparquet');
let reader: Hyparquet | undefined;
async function load(): Promise<Hyparquet> {
  reader ??= await import('hyparquet');
  return reader;
}

export interface PartFile {
  path: string;
  rows: number;
  schema: SchemaElement[];
  /** The footer; statistics as sgq wrote them (timestamps as microseconds, strings as their UTF-8 bytes). */
  metadata: FileMetaData;
  /** Every property of every column: files of one signature merge into one. */
  signature: string;
  /** The bytes of [start, end) of the file. */
  read(start: number, end: number): Uint8Array;
}

// Statistics are read back as they were written, so that a merged file can carry them unchanged.
const RAW = { timestampFromMicroseconds: (micros: bigint) => micros, stringFromBytes: (bytes: Uint8Array) => bytes };

export async function readPartFile(path: string): Promise<PartFile> {
  const { asyncBufferFromFile, parquetMetadataAsync } = await load();
  const file = await asyncBufferFromFile(path);
  const metadata = await parquetMetadataAsync(file, { parsers: RAW });
  const columns = metadata.schema.slice(1);
  return {
    path,
    rows: Number(metadata.num_rows),
    schema: metadata.schema,
    metadata,
    signature: JSON.stringify(columns.map(({ name, type, type_length, repetition_type, converted_type, scale, precision, logical_type }) => [name, type, type_length, repetition_type, converted_type, scale, precision, logical_type])),
    read: (start, end) => readRange(path, start, end),
  };
}

/** Bytes of a file the dataset never rewrites (a part is renamed into place whole). */
function readRange(path: string, start: number, end: number): Uint8Array {
  const bytes = Buffer.allocUnsafe(end - start);
  const fd = openSync(path, 'r');
  try {
    for (let done = 0; done < bytes.length; ) {
      const n = readSync(fd, bytes, done, bytes.length - done, start + done);
      if (n === 0) throw new Error(`${path} ended before byte ${start + done}`);
      done += n;
    }
  } finally {
    closeSync(fd);
  }
  return bytes;
}

