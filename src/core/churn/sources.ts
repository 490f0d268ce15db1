import type { FileHandle } from 'node:fs/promises';
import { ExternalSort } from './external-sort.js';
import { keyedInOrder, type KeyStats, type Keyed } from './keyed.js';
import { lineBatches, openText, textChunks } from './lines.js';
import { csvRecordLines } from './csv-records.js';
import { keyReader, parseRecord } from './record-key.js';
import { fieldsOf, type Glimpse } from './identity.js';

// Where the two sides of a diff come from: stored snapshots are already in key order and
// are read as they are; any other file is sorted on disk first.

/** A stored snapshot's records, in key order, from its open data file. */
export async function* snapshotRecords(handle: FileHandle, sortedBy: string, stats: KeyStats, where: string): AsyncGenerator<Keyed[]> {
  yield* keyedInOrder(lineBatches(await openText(handle)), keyReader(sortedBy), stats, where);
}

/**
 * The record lines of an export sgq wrote: NDJSON, a `-o json` array (one record a line),
 * or CSV (by its extension); any of them gzipped.
 */
export async function* exportLines(source: string | FileHandle): AsyncGenerator<string[]> {
  const text = await openText(source);
  if (typeof source === 'string' && /\.csv(\.gz)?$/i.test(source)) {
    yield* csvRecordLines(textChunks(text));
    return;
  }
  for await (const lines of lineBatches(text)) {
    const records: string[] = [];
    for (let line of lines) {
      line = line.trim();
      if (line === '[' || line === ']' || line === '[]') continue;
      if (line.endsWith(',')) line = line.slice(0, -1);
      records.push(line);
    }
    if (records.length) yield records;
  }
}

/**
 * An export's records sorted by `key` on disk (in `tempDir`), each key once. `signal` stops
 * the reading between chunks and the merging between batches, with its reason.
 */
export async function sortedExport(
  path: string | FileHandle,
  key: string,
  tempDir: string,
  signal?: AbortSignal,
): Promise<{ records: AsyncGenerator<Keyed[]>; stats: KeyStats; discard: () => void }> {
  const sort = new ExternalSort(keyReader(key), tempDir, undefined, undefined, signal);
  try {
    for await (const lines of exportLines(path)) {
      signal?.throwIfAborted();
      await sort.add(lines);
    }
    await sort.seal();
  } catch (error) {
    sort.discard();
    throw error;
  }
  return { records: sort.sorted(), stats: sort.stats, discard: () => sort.discard() };
}

/**
 * The identity fields of the first record that has one (or the --key field), read from the
 * start of the lines and no further: the side's shape, before it is sorted or merged.
 */
export async function glimpse(batches: AsyncIterable<string[]>, key?: string): Promise<Glimpse> {
  let records = false;
  let sample: string[] | undefined;
  for await (const lines of batches) {
    for (const line of lines) {
      const record = parseRecord(line);
      records = true;
      sample ??= Object.keys(record);
      const fields = fieldsOf(record, key);
      // Leaving the loop ends the generator, which destroys the stream it read.
      if (fields) return { records, fields, sample };
    }
  }
  return { records, sample };
}
