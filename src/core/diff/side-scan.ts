import { open, type FileHandle } from 'node:fs/promises';
import { ByteKeyReader } from './byte-key.js';
import { LineSplitter } from './byte-lines.js';
import { csvRecordLines, isCsvName } from '../records/csv-records.js';
import type { KeyStats } from '../records/keyed.js';
import { isGzipped, LineTooLong, openText, textChunks } from '../records/lines.js';
import type { OnRecord } from './partitions.js';
import { NotARecord } from '../records/record-key.js';

// Reading one side of a hash diff: its record lines as bytes, each keyed by a scan of its
// bytes and handed on with its key and hash. Used by the main thread and by the worker that
// reads the older side (diff-worker.ts).

/** What reading a side needs: its file, its kind, the field that keys it; `stats` counts what it left out. */
export interface ScannedSide {
  source: string | FileHandle;
  /** An export (trimmed lines, `-o json` arrays, CSV by its name), not a stored snapshot. */
  isExport: boolean;
  field: string;
  stats: KeyStats;
  where: string;
}

export const isCsv = (side: ScannedSide) => side.isExport && isCsvName(side.source);

/** Reads a side's record lines as bytes and hands each keyed one on; `between` runs after each chunk. */
export async function scanSide(side: ScannedSide, onRecord: OnRecord, signal: AbortSignal | undefined, between: () => Promise<void>): Promise<void> {
  const reader = new ByteKeyReader(side.field);
  const { stats } = side;
  const splitter = new LineSplitter((line, start, end) => {
    if (reader.read(line, start, end)) onRecord(line, start, end, reader.buf, reader.start, reader.end, reader.hash);
    else stats.missingKey++;
  }, side.isExport);
  try {
    for await (const chunk of sideBytes(side)) {
      signal?.throwIfAborted();
      splitter.push(chunk);
      await between();
    }
    splitter.end();
    await between();
  } catch (error) {
    if (error instanceof NotARecord || error instanceof LineTooLong) error.message = `${side.where}: ${error.message}`;
    throw error;
  }
}

/** A side's text as bytes; a CSV export's rows as JSON lines. */
async function* sideBytes(side: ScannedSide): AsyncGenerator<Buffer> {
  if (isCsv(side)) {
    for await (const lines of csvRecordLines(textChunks(await openText(side.source)))) yield Buffer.from(`${lines.join('\n')}\n`, 'utf8');
    return;
  }
  const handle = typeof side.source === 'string' ? await open(side.source, 'r') : side.source;
  try {
    if (await isGzipped(handle)) yield* (await openText(handle, true)) as AsyncIterable<Buffer>;
    else yield* plainBytes(handle);
  } finally {
    if (typeof side.source === 'string') await handle.close();
  }
}

/**
 * A file's bytes in one buffer used again for every read: its reader is done with a chunk
 * before asking for the next (the lines it keeps, it copies), so reading makes no garbage.
 */
async function* plainBytes(handle: FileHandle): AsyncGenerator<Buffer> {
  const buffer = Buffer.allocUnsafe(READ_BYTES);
  for (let position = 0; ; ) {
    const { bytesRead } = await handle.read(buffer, 0, READ_BYTES, position);
    if (bytesRead === 0) return;
    position += bytesRead;
    yield buffer.subarray(0, bytesRead);
  }
}

const READ_BYTES = 1024 * 1024;
