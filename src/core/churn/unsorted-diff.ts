import { open } from 'node:fs/promises';
import { getHeapStatistics } from 'node:v8';
import { ChangeOrder } from './change-order.js';
import { PartitionJoin, type JoinContext } from './hash-diff.js';
import { KeyTable } from './key-table.js';
import type { Change, DiffCounts } from './merge-diff.js';
import { eachRecord, Partitions, type OnRecord, type Part } from './partitions.js';
import type { KeyOf } from './record-key.js';
import { isCsv, scanSide, type ScannedSide } from './side-scan.js';

// The diff of two sides in no particular order (exports, and snapshots sorted by another
// field): a hash join, not a sort. Each side is read once, as bytes, its key found by a scan
// of the line (a line the scan is unsure of is parsed); its records are split by the hash of
// their key into partitions sized so that one partition of the older side fits in memory
// (partition 0 stays there; the others are spilled to TMPDIR). Each partition of the newer
// side then probes a table of the older one's keys. The changes, few next to the records,
// are put in key order at the end: the output is the one a merge of sorted sides gives.
// (A sort of both sides cost about a third of its time in garbage collection and a fifth in
// its comparator: npm run bench, issue 22.)

/** One side as it is read, with the field that keys it read as text (the order of the output). */
export interface UnsortedSide extends ScannedSide {
  key: KeyOf;
}

export interface UnsortedOptions {
  changed: boolean;
  signal?: AbortSignal;
  names?: { older: KeyOf; newer: KeyOf };
  /** Where partitions and sorted changes are spilled. */
  tempDir: string;
  /** The size of a partition (PARTITION_BYTES); tests make it tiny to spill and split. */
  partitionBytes?: number;
}

/**
 * Bytes of the older side's records a partition is sized for: 8 MiB, less under a capped
 * heap (`node --max-old-space-size`), whose owner asked for a small process. The records
 * are held outside the JS heap, with a table of about 40 bytes a key. Partitions of 2, 4, 8,
 * 16, 32 and 64 MiB were measured on a 1,000,000 x 1,000,000 diff: from 8 MiB up the time
 * was the same or worse (the table outgrows the CPU's caches) and the peak grew (101, 120,
 * 150, 215 MiB); below it, more partitions cost more than they saved.
 */
export const PARTITION_BYTES = Math.min(8 * 1024 * 1024, Math.floor(getHeapStatistics().heap_size_limit / 16));
/** Partitions at most: each has a 256 KiB buffer while the sides are read. */
const MAX_PARTITIONS = 64;

/** The diff of two unsorted sides; the changes reach `emit` in key order, in batches. */
export async function diffUnsorted(older: UnsortedSide, newer: UnsortedSide, options: UnsortedOptions, emit: (changes: Change[]) => Promise<void>): Promise<DiffCounts> {
  const { signal, tempDir } = options;
  const size = options.partitionBytes ?? PARTITION_BYTES;
  const count = partitionCount(await estimateBytes(older), size);
  const counts: DiffCounts = { gained: 0, lost: 0, renamed: 0, changed: 0, unchanged: 0 };
  const changes = new ChangeOrder(tempDir, signal);
  const scratch = { buffer: Buffer.alloc(0), table: new KeyTable() };
  const context: JoinContext = { keys: { older: older.key, newer: newer.key }, names: options.names, stats: { older: older.stats, newer: newer.stats }, counts, changes, printChanged: options.changed };
  const olderParts = new Partitions(count, tempDir, 2 * size);
  const newerParts = new Partitions(count, tempDir, 0);
  try {
    await scanSide(older, olderParts.add, signal, async () => undefined);
    olderParts.seal();
    const run: JoinRun = { context, scratch, signal, size };
    const joined = await readNewer(newer, olderParts, newerParts, run);
    for (let part = joined ? 1 : 0; part < count; part++) await joinSpilled(olderParts.parts[part]!, newerParts.parts[part]!, olderParts.bits, run);
    // The joins are done: their buffer and table go before the changes are sorted and written.
    Object.assign(scratch, { buffer: Buffer.alloc(0), table: new KeyTable() });
    for await (const batch of changes.sorted()) {
      signal?.throwIfAborted();
      await emit(batch);
    }
  } finally {
    olderParts.discard();
    newerParts.discard();
    changes.discard();
  }
  if (!options.changed) {
    counts.unchanged += counts.changed;
    counts.changed = 0;
  }
  return counts;
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

/** What every partition's join shares: where results go, the buffers and table it reuses, the stop. */
interface JoinRun {
  context: JoinContext;
  scratch: { buffer: Buffer; table: KeyTable };
  signal?: AbortSignal;
  /** The size of a partition. */
  size: number;
}

/**
 * Joins one spilled partition, removing its files as soon as they are read. One whose older
 * records are more than twice what a partition is sized for (the side was larger than
 * estimated) is split again by the next bits of the hash, until no bit is left.
 */
async function joinSpilled(older: Part, newer: Part, usedBits: number, run: JoinRun): Promise<void> {
  const { context, scratch, signal } = run;
  signal?.throwIfAborted();
  if (older.bytes > 2 * run.size && usedBits < 32) return splitAndJoin(older, newer, usedBits, run);
  const join = new PartitionJoin(await older.load(scratch), older.records, context, scratch.table);
  older.discard();
  for await (const chunk of newer.chunks()) {
    signal?.throwIfAborted();
    eachRecord(chunk, join.probe);
    await context.changes.flush();
  }
  newer.discard();
  await join.lost();
  await context.changes.flush();
}

async function splitAndJoin(older: Part, newer: Part, usedBits: number, run: JoinRun): Promise<void> {
  const { signal } = run;
  const count = Math.min(partitionCount(older.bytes, run.size), 2 ** (32 - usedBits));
  const [olderParts, newerParts] = [new Partitions(count, older.dir, 0, usedBits), new Partitions(count, older.dir, 0, usedBits)];
  try {
    for (const [from, to] of [[older, olderParts], [newer, newerParts]] as const) {
      for await (const chunk of from.chunks()) {
        signal?.throwIfAborted();
        eachRecord(chunk, to.add);
      }
      from.discard();
      to.seal();
    }
    for (let part = 0; part < count; part++) await joinSpilled(olderParts.parts[part]!, newerParts.parts[part]!, usedBits + olderParts.bits, run);
  } finally {
    olderParts.discard();
    newerParts.discard();
  }
}

/** The fewest partitions (a power of two) whose older records fit `size` each, headers included. */
function partitionCount(bytes: number, size: number): number {
  let count = 1;
  while (count < MAX_PARTITIONS && (bytes * 1.25) / count > size) count *= 2;
  return count;
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
    if (head[0] === 0x1f && head[1] === 0x8b && size >= 18) {
      await handle.read(head, 0, 4, size - 4);
      bytes = Math.max(head.readUInt32LE(0), size * 4);
    }
    return isCsv(side) ? bytes * 3 : bytes;
  } finally {
    if (typeof side.source === 'string') await handle.close();
  }
}

