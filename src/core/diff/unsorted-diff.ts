import { open } from 'node:fs/promises';
import { ChangeOrder } from './change-order.js';
import { RUN_CHARS } from '../sort/external-sort.js';
import { OLD_SPACE_BYTES } from '../sort/old-space.js';
import { DiffLane, laneFiles, type LaneJob } from './diff-lane.js';
import { PartitionJoin } from './hash-diff.js';
import { warmUpJoins } from './join-warmup.js';
import { KeyTable } from '../key-table.js';
import { addCounts, settled, type Change, type DiffCounts } from './merge-diff.js';
import { Partitions, type OnRecord } from './partitions.js';
import { isGzipHead } from '../records/lines.js';
import { isCsv, scanSide, type ScannedSide } from './side-scan.js';
import { joinRun, joinSpilled, needsSplit, partitionCount, type JoinRun } from './spilled-join.js';

// The diff of two sides in no particular order (exports, and snapshots sorted by another
// field): a hash join, not a sort. Each side is read once, as bytes, its key found by a scan
// of the line (a line the scan is unsure of is parsed); its records are split by the hash of
// their key into partitions sized so that one partition of the older side fits in memory
// (partition 0 stays there; the others are spilled to TMPDIR). Each partition of the newer
// side then probes a table of the older one's keys. The changes, few next to the records,
// are put in key order at the end: the output is the one a merge of sorted sides gives.
// (A sort of both sides cost about a third of its time in garbage collection and a fifth in
// its comparator: npm run bench, issue 22. Tried again for issue 35, each side sorted on disk
// by external-sort.ts then merged: 3.75-4.01x of DuckDB on the bench's diff row, where this
// join was 1.20-1.52x in the same runs; the target is 1.50x.)

/** One side as it is read. */
export type UnsortedSide = ScannedSide;

export interface UnsortedOptions {
  changed: boolean;
  signal?: AbortSignal;
  /** The username fields, when matching by id: a same id under another username is a rename. */
  names?: { older: string; newer: string };
  /** Where partitions and sorted changes are spilled. */
  tempDir: string;
  /** The size of a partition (PARTITION_BYTES); tests make it tiny to spill and split. */
  partitionBytes?: number;
  /**
   * Whether a worker thread (dist/diff-worker.cjs) may take the second core: the older side
   * read, and the partitions joined, there. Without it, or where no thread starts, this thread
   * does all. (Tests name another script with `workerScript`.)
   */
  thread?: boolean;
  workerScript?: string;
  /** Characters of changes the worker sorts itself (held-changes.ts); tests make it tiny. */
  workerHoldChars?: number;
}

/**
 * Bytes of the older side's records a partition is sized for: 8 MiB, a 16th of V8's old
 * generation under a capped heap (`node --max-old-space-size`, old-space.ts), whose owner
 * asked for a small process. The records are held outside the JS heap, with a table of
 * about 40 bytes a key. Partitions of 2, 4, 8, 16, 32 and 64 MiB were measured on a
 * 1,000,000 x 1,000,000 diff: from 8 MiB up the time was the same or worse (the table
 * outgrows the CPU's caches) and the peak grew (101, 120, 150, 215 MiB); below it, more
 * partitions cost more than they saved.
 */
const PARTITION_BYTES = Math.min(8 * 1024 * 1024, Math.floor(OLD_SPACE_BYTES / 16));
/**
 * The same when two threads join at once (the worker's path): half, 4 MiB. The two threads'
 * tables and records share the CPU's last cache; with 8 MiB each, the joins of two
 * 1,000,000-record exports took ~685 ms of CPU, with 4 MiB ~590 (interleaved runs, issue 22),
 * at the same peak (2 MiB: ~570, but the scans +40 ms and the peak +12 MiB, 32 more blocks).
 */
const LANE_PARTITION_BYTES = Math.min(4 * 1024 * 1024, PARTITION_BYTES);
/**
 * The largest older side (its text, estimated) read with the worker thread. Past it, the main
 * thread does all: with a second heap and the main thread's own growing faster (V8 lets more
 * garbage pile up), the 5,000,000 x 5,000,000 diff of the bench peaked at 258 MiB, not 159,
 * where the target is 200. The 1,000,000-record exports of the bench are 76 MB.
 */
const LANE_MAX_BYTES = 128 * 1024 * 1024;

/** The diff of two unsorted sides; the changes reach `emit` in key order, in batches. */
export async function diffUnsorted(older: UnsortedSide, newer: UnsortedSide, options: UnsortedOptions, emit: (changes: Change[]) => Promise<void>): Promise<DiffCounts> {
  const { signal, tempDir } = options;
  const bytes = await estimateBytes(older);
  const twoCores = options.thread === true && bytes <= LANE_MAX_BYTES && typeof older.source === 'string';
  const size = options.partitionBytes ?? (twoCores ? LANE_PARTITION_BYTES : PARTITION_BYTES);
  const count = partitionCount(bytes, size);
  const changes = new ChangeOrder(tempDir, signal);
  const run = joinRun({ names: options.names, stats: { older: older.stats, newer: newer.stats }, changes, printChanged: options.changed, size, dir: tempDir, signal });
  try {
    // No thread started (it could not): this thread does all, as it would without one.
    const lane = twoCores ? startLane(older, newer, options, { count, size, changes }) : undefined;
    await (lane ? joinOnTwoCores(older, newer, count, lane, run, changes, options.names) : joinHere(older, newer, count, run));
    // The joins are done: their buffer and table go before the changes are sorted and written.
    Object.assign(run.scratch, { buffer: Buffer.alloc(0), table: new KeyTable() });
    for await (const batch of changes.sorted()) {
      signal?.throwIfAborted();
      await emit(batch);
    }
  } finally {
    changes.discard();
  }
  return settled(run.context.counts, options.changed);
}

/** Both sides read and joined in this thread: partition 0 of the older side stays in memory. */
async function joinHere(older: UnsortedSide, newer: UnsortedSide, count: number, run: JoinRun): Promise<void> {
  const olderParts = new Partitions(count, run.dir, 2 * run.size);
  const newerParts = new Partitions(count, run.dir, 0);
  try {
    await scanSide(older, olderParts.add, run.signal, async () => undefined);
    olderParts.seal();
    const joined = await readNewer(newer, olderParts, newerParts, run);
    for (let part = joined ? 1 : 0; part < count; part++) await joinSpilled(olderParts.parts[part]!, newerParts.parts[part]!, olderParts.bits, run);
  } finally {
    olderParts.discard();
    newerParts.discard();
  }
}

/**
 * The older side read by the worker thread while this one reads the newer; then the
 * partitions joined by both, each taking the next (this thread alone those to split again).
 */
async function joinOnTwoCores(older: UnsortedSide, newer: UnsortedSide, count: number, lane: DiffLane, run: JoinRun, changes: ChangeOrder, names: UnsortedOptions['names']): Promise<void> {
  const { signal, context } = run;
  const newerParts = new Partitions(count, run.dir, 0);
  let olderParts: Partitions | undefined;
  try {
    await scanSide(newer, newerParts.add, signal, async () => undefined);
    newerParts.seal(true);
    // Time this thread would spend waiting for the worker's side goes to warming up the join.
    let scannedYet = false;
    void lane.scanned.finally(() => (scannedYet = true)).catch(() => undefined);
    await warmUpJoins(names, () => scannedYet || signal?.aborted === true);
    const scanned = await untilAborted(lane.scanned, signal);
    olderParts = scanned.parts;
    older.stats.missingKey += scanned.missingKey;
    const { parts, bits } = olderParts;
    // Partitions to split again stay with this thread (only it makes files); the rest are shared.
    const split = parts.map((part) => needsSplit(part, bits, run.size));
    const shared = parts.flatMap((_, i) => (split[i] ? [] : [i]));
    lane.join(newerParts, shared);
    for (let i = lane.take(shared); i !== undefined; i = lane.take(shared)) {
      await joinSpilled(parts[i]!, newerParts.parts[i]!, bits, run);
      await changes.endPartition();
    }
    for (const [i, part] of parts.entries()) if (split[i]) await joinSpilled(part, newerParts.parts[i]!, bits, run);
    // While the worker sorts the changes it held (held-changes.ts), this thread sorts its own.
    await changes.sortHeld();
    const joined = await untilAborted(lane.joined, signal);
    addCounts(context.counts, joined.counts);
    context.stats.older.duplicates += joined.duplicates.older;
    context.stats.newer.duplicates += joined.duplicates.newer;
  } finally {
    await lane.stop();
    olderParts?.discard();
    newerParts.discard();
  }
}

/** The worker thread, which reads the older side (a file it opens itself), if it starts. */
function startLane(older: UnsortedSide, newer: UnsortedSide, options: UnsortedOptions, shared: { count: number; size: number; changes: ChangeOrder }): DiffLane | undefined {
  const { isExport, field, where } = older;
  const source = older.source as string;
  const job: LaneJob = { older: { source, isExport, field, where }, newerField: newer.field, names: options.names, printChanged: options.changed, holdChars: options.workerHoldChars ?? RUN_CHARS, size: shared.size, dir: options.tempDir, ...laneFiles(shared.count, options.tempDir) };
  return DiffLane.start(job, shared.changes, options.workerScript);
}

/** A promise, or the signal's reason as soon as it is aborted. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(signal.reason);
    signal.addEventListener('abort', stop, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', stop));
  });
}

/**
 * Reads the newer side into its partitions. Partition 0 of the older side is in memory
 * (unless the side was larger than estimated): the newer side's records of it probe it as
 * they are read, and it is joined here. Returns whether it was.
 */
async function readNewer(newer: UnsortedSide, olderParts: Partitions, newerParts: Partitions, run: JoinRun): Promise<boolean> {
  const { context, scratch, signal } = run;
  const part = olderParts.parts[0]!;
  const first = part.inMemory ? new PartitionJoin(await part.load(scratch), part.records, context, scratch.table) : undefined;
  if (first) part.discard();
  const route: OnRecord = (line, ls, le, key, ks, ke, hash) => (first && newerParts.of(hash) === 0 ? first.probe : newerParts.add)(line, ls, le, key, ks, ke, hash);
  await scanSide(newer, route, signal, () => context.changes.flush());
  newerParts.seal();
  if (first) await first.lost();
  return first !== undefined;
}

/**
 * The bytes of a side's text, estimated: its size, or a gzip file's own record of its
 * length (modulo 4 GiB, so never taken below four times the compressed size); CSV grows as
 * JSON lines. A side larger than estimated is split again as it is joined (joinSpilled).
 */
async function estimateBytes(side: UnsortedSide): Promise<number> {
  const handle = typeof side.source === 'string' ? await open(side.source, 'r') : side.source;
  try {
    const { size } = await handle.stat();
    const head = Buffer.alloc(4);
    await handle.read(head, 0, 2, 0);
    let bytes = size;
    if (isGzipHead(head.subarray(0, 2)) && size >= 18) {
      await handle.read(head, 0, 4, size - 4);
      bytes = Math.max(head.readUInt32LE(0), size * 4);
    }
    return isCsv(side) ? bytes * 3 : bytes;
  } finally {
    if (typeof side.source === 'string') await handle.close();
  }
}

