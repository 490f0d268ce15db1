import type { FileHandle } from 'node:fs/promises';
import { constants, gunzipSync } from 'node:zlib';
import { keyedInOrder, type KeyStats, type Keyed } from './keyed.js';
import { cleanLines, isGzipHead, lineBatches, openText, textChunks } from './lines.js';
import { csvRecordLines, isCsvName } from './csv-records.js';
import { keyReader, parseRecord } from './record-key.js';
import { fieldsOf, type Glimpse } from './identity.js';

// Where the two sides of a diff come from: stored snapshots are already in key order and
// are read as they are; exports are read as lines (their shape glanced at, CSV as JSON lines).

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
  if (isCsvName(source)) {
    yield* csvRecordLines(textChunks(text));
    return;
  }
  for await (const lines of lineBatches(text)) {
    const records: string[] = [];
    for (const line of lines) {
      const record = exportRecord(line);
      if (record !== undefined) records.push(record);
    }
    if (records.length) yield records;
  }
}

/** An export's line as a record's text: trimmed, a `-o json` array's brackets and trailing comma taken off; undefined for none. */
export function exportRecord(text: string): string | undefined {
  const line = text.trim();
  if (line === '' || line === '[' || line === ']' || line === '[]') return undefined;
  return line.endsWith(',') ? line.slice(0, -1) : line;
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

/** The bytes of a stored snapshot's head that headGlimpse inflates: some 50 records of the service. */
const HEAD_BYTES = 4096;

/**
 * `glimpse` of a stored snapshot from its head alone: its first few KiB, inflated at once, cut
 * at its last whole line. A night's diff glimpsed at the snapshot before through a stream of
 * its own (gunzip, reads, a stream destroyed midway) and then read it whole again. Undefined
 * when the head holds no record with an identity (or is not gzip, or cannot be inflated): then
 * the whole file is glimpsed at, as before.
 */
export async function headGlimpse(handle: FileHandle, key?: string): Promise<Glimpse | undefined> {
  const head = Buffer.allocUnsafe(HEAD_BYTES);
  const { bytesRead } = await handle.read(head, 0, HEAD_BYTES, 0);
  if (!isGzipHead(head, bytesRead)) return undefined;
  let text: string;
  try {
    // What the head inflates to, without the end of the stream it lacks.
    text = gunzipSync(head.subarray(0, bytesRead), { finishFlush: constants.Z_SYNC_FLUSH }).toString('utf8');
  } catch {
    return undefined;
  }
  const lines = cleanLines(text.slice(0, text.lastIndexOf('\n') + 1).split('\n'));
  const seen = await glimpse(
    (async function* () {
      yield lines;
    })(),
    key,
  );
  return seen.fields ? seen : undefined;
}
