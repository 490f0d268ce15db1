import { createReadStream } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';

// Reading exports and snapshots as batches of lines: a batch per chunk keeps the per-line
// cost to a split, which matters at millions of lines.

const CHUNK = 64 * 1024;
/**
 * gunzip's pieces out: each is a round trip through libuv's threads, whose callback runs on
 * the main thread; a 1,000-follower snapshot (476 KB of lines) took eight at 64 KiB, four now.
 */
const GUNZIP_CHUNK = 128 * 1024;

/** Whether bytes start with gzip's magic bytes: the one test of whether a side is gzipped. */
export const isGzipHead = (head: Buffer, length = head.length) => length >= 2 && head[0] === 0x1f && head[1] === 0x8b;

/** Whether an open file starts with gzip's magic bytes. */
export async function isGzipped(handle: FileHandle): Promise<boolean> {
  const head = Buffer.alloc(2);
  const { bytesRead } = await handle.read(head, 0, 2, 0);
  return isGzipHead(head, bytesRead);
}

/**
 * The text of a file or an open handle, gunzipped when it starts with gzip's magic bytes
 * (`gzipped`, when the caller has looked already). A handle's first chunk says it: no read of
 * its first two bytes alone (a read of its own for each snapshot a run compares with).
 */
export async function openText(source: string | FileHandle, gzipped?: boolean): Promise<Readable> {
  if (typeof source !== 'string') {
    // A handle passed in stays open: its owner closes it.
    const first = await readChunk(source, 0);
    return gunzippedIf(gzipped ?? isGzipHead(first), handleBytes(source, first));
  }
  const handle = await open(source, 'r');
  gzipped ??= await isGzipped(handle);
  return gunzippedIf(gzipped, createReadStream('', { fd: handle, start: 0, highWaterMark: CHUNK }));
}

function gunzippedIf(gzipped: boolean, raw: Readable): Readable {
  if (!gzipped) return raw;
  const gunzip = createGunzip({ chunkSize: GUNZIP_CHUNK });
  raw.on('error', (error: Error) => gunzip.destroy(error));
  // A reader that stops early (a glimpse at the first records) destroys the gunzip: the file's stream goes with it.
  gunzip.on('close', () => raw.destroy());
  return raw.pipe(gunzip);
}

/** Up to CHUNK bytes of a handle from `position` (none at its end). */
async function readChunk(handle: FileHandle, position: number): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(CHUNK);
  const { bytesRead } = await handle.read(buffer, 0, CHUNK, position);
  return bytesRead === CHUNK ? buffer : buffer.subarray(0, bytesRead);
}

/**
 * A handle's bytes from its start (`first` read already), read at positions. A file stream on
 * a handle closes it when it is destroyed, whatever autoClose says; this one leaves it open,
 * so that a reader may stop early (a glance at the first records) and another read the same
 * handle again.
 */
function handleBytes(handle: FileHandle, first: Buffer): Readable {
  return Readable.from(
    (async function* () {
      for (let chunk = first, position = 0; chunk.length > 0; chunk = await readChunk(handle, position)) {
        position += chunk.length;
        yield chunk;
      }
    })(),
    { objectMode: false, highWaterMark: CHUNK },
  );
}

/**
 * The most bytes decoded into one string. A line read is a slice of the string it was decoded
 * in and keeps all of it alive; gunzip's 128 KiB pieces, decoded whole, made strings of up to
 * 256 KiB (two bytes a character), each in V8's space for large objects, kept until the last
 * line of it was compared: the diffs of 8 users in flight held 30-40 MiB of them (the nightly
 * job of accounts of 50,000 followers). Decoded 32 KiB at a time, a piece is an ordinary
 * young string; the round trips through zlib's threads stay as few.
 */
export const TEXT_PIECE = 32 * 1024;

/** Text in decoded chunks of at most TEXT_PIECE bytes, for parsers that do not split on lines (CSV); each chunk is decoded before the next is asked for. */
export async function* textChunks(stream: AsyncIterable<Buffer>): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  for await (const chunk of stream) {
    for (let at = 0; at < chunk.length; at += TEXT_PIECE) yield decoder.write(chunk.length <= TEXT_PIECE ? chunk : chunk.subarray(at, at + TEXT_PIECE));
  }
  const rest = decoder.end();
  if (rest) yield rest;
}

/**
 * The longest line (or CSV row) read, in characters: a record of the service is a few hundred.
 * A longer one is refused rather than held: memory stays bounded whatever the file holds.
 */
export const MAX_LINE_CHARS = 4 * 1024 * 1024;

/** A line (or a CSV row) past MAX_LINE_CHARS; `line` counts from 1. */
export class LineTooLong extends Error {
  constructor(
    readonly line: number,
    what: 'line' | 'row' = 'line',
  ) {
    super(`${what} ${line.toLocaleString('en-US')} is longer than ${MAX_LINE_CHARS.toLocaleString('en-US')} characters, the most sgq reads`);
    this.name = 'LineTooLong';
  }
}

/**
 * The non-empty lines of a text, in batches, without their LF or CRLF ends. Each chunk is
 * split once; a line that spans chunks is kept as its pieces and joined once it ends, so a
 * long line costs linear time (joining the rest to every chunk and splitting again was
 * quadratic), and it is refused once past MAX_LINE_CHARS.
 */
export async function* lineBatches(stream: AsyncIterable<Buffer>): AsyncGenerator<string[]> {
  let pieces: string[] = [];
  let pending = 0;
  let ended = 0;
  for await (const text of textChunks(stream)) {
    const parts = text.split('\n');
    const last = parts.pop()!;
    if (parts.length) {
      if (pieces.length) parts[0] = pieces.join('') + parts[0]!;
      if (parts[0]!.length > MAX_LINE_CHARS) throw new LineTooLong(ended + 1);
      ended += parts.length;
      pieces = [];
      pending = 0;
    }
    pieces.push(last);
    pending += last.length;
    if (pending > MAX_LINE_CHARS) throw new LineTooLong(ended + 1);
    const batch = cleanLines(parts);
    if (batch.length) yield batch;
  }
  const rest = cleanLines([pieces.join('')]);
  if (rest.length) yield rest;
}

/** The lines of a split text as lineBatches gives them: a CR before the LF dropped, blank lines skipped. */
export function cleanLines(parts: string[]): string[] {
  const out: string[] = [];
  for (let line of parts) {
    if (line.endsWith('\r')) line = line.slice(0, -1);
    if (line.trim() !== '') out.push(line);
  }
  return out;
}
