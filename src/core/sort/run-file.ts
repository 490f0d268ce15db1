import { open } from 'node:fs/promises';

// A sorted run (external-sort.ts) read back for its merge. A merge reads all its runs at once,
// and the users in flight merge at once: at --concurrency 8, 8 accounts of 50,000 followers
// merged some 250 runs together. Each read through a file stream of 16 KiB held three buffers
// ahead and as many decoded chunks (the lines are slices of them): 35-40 MiB live, twice that
// in the heap, the most of the nightly job's peak RSS (280-310 MiB). A run is read through one
// buffer of its own, refilled once its lines are decoded, of a size shared out by the merge.

/** The most a merge's runs read into at once, in all (bytes), whatever their number... */
export const MERGE_READ = 256 * 1024;
/** ...each between these: fewer bytes a read cost more round trips through libuv's threads than they saved. */
export const RUN_READ_MIN = 4 * 1024;
export const RUN_READ_MAX = 16 * 1024;

/** The bytes each run of a merge of `runs` reads at once: MERGE_READ shared out, in KiB, within RUN_READ_MIN and RUN_READ_MAX. */
export function runReadBytes(runs: number): number {
  const share = Math.floor(MERGE_READ / Math.max(1, runs) / 1024) * 1024;
  return Math.min(RUN_READ_MAX, Math.max(RUN_READ_MIN, share));
}

/**
 * A run file's bytes in chunks of up to `bytes`, all in one buffer: a chunk is valid until the
 * next is asked for (lineBatches decodes each before it asks), so nothing is read ahead.
 */
export async function* runChunks(file: string, bytes: number): AsyncGenerator<Buffer> {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.allocUnsafe(bytes);
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, bytes, null);
      if (bytesRead === 0) return;
      yield buffer.subarray(0, bytesRead);
    }
  } finally {
    await handle.close();
  }
}
