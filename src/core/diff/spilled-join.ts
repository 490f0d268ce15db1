import type { ChangeSink } from './change-order.js';
import { PartitionJoin, type JoinContext } from './hash-diff.js';
import { KeyTable } from '../key-table.js';
import type { KeyStats } from '../records/keyed.js';
import { emptyCounts } from './merge-diff.js';
import { eachRecord, Partitions, type Part } from './partitions.js';
import { keyReader } from '../records/record-key.js';

// The join of one spilled partition of a hash diff, by the main thread or by the worker that
// shares the partitions with it (diff-worker.ts).

/** Partitions at most: each has a 256 KiB buffer while the sides are read. */
const MAX_PARTITIONS = 64;

/** What every partition's join shares: where results go, the buffers and table it reuses, the stop. */
export interface JoinRun {
  context: JoinContext;
  scratch: { buffer: Buffer; table: KeyTable };
  signal?: AbortSignal;
  /** The size of a partition. */
  size: number;
  /** Where partitions are spilled. */
  dir: string;
}

/** What a thread needs to join partitions: the main thread's and the worker's alike. */
export function joinRun(options: {
  names?: { older: string; newer: string };
  stats: { older: KeyStats; newer: KeyStats };
  changes: ChangeSink;
  printChanged: boolean;
  size: number;
  dir: string;
  signal?: AbortSignal;
}): JoinRun {
  const { names, stats, changes, printChanged, size, dir, signal } = options;
  const readers = names && { older: keyReader(names.older), newer: keyReader(names.newer) };
  const context: JoinContext = { names: readers, stats, counts: emptyCounts(), changes, printChanged };
  return { context, scratch: { buffer: Buffer.alloc(0), table: new KeyTable() }, signal, size, dir };
}

/**
 * A turn of the event loop: a signal is heard, and the other thread's messages are taken in.
 * The worker waits for the main thread to acknowledge its changes (diff-lane.ts); yielding only
 * between partitions, the main thread kept it waiting ~220 ms of a run (a partition at a time).
 */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** Whether a partition's older records are more than twice what a partition is sized for: it is split again to be joined. */
export const needsSplit = (older: Part, usedBits: number, size: number) => older.bytes > 2 * size && usedBits < 32;

/**
 * Joins one spilled partition, removing its files as soon as they are read. One whose older
 * records are more than twice what a partition is sized for (the side was larger than
 * estimated) is split again by the next bits of the hash, until no bit is left.
 */
export async function joinSpilled(older: Part, newer: Part, usedBits: number, run: JoinRun): Promise<void> {
  const { context, scratch, signal } = run;
  // The partition's files are read at once (partitions.ts): the loop hears signals between partitions.
  await nextTurn();
  signal?.throwIfAborted();
  if (needsSplit(older, usedBits, run.size)) return splitAndJoin(older, newer, usedBits, run);
  const join = new PartitionJoin(await older.load(scratch), older.records, context, scratch.table);
  older.discard();
  for (const chunk of newer.chunks()) {
    signal?.throwIfAborted();
    eachRecord(chunk, join);
    await context.changes.flush();
    await nextTurn();
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
      for (const chunk of from.chunks()) {
        signal?.throwIfAborted();
        eachRecord(chunk, to);
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
export function partitionCount(bytes: number, size: number): number {
  let count = 1;
  while (count < MAX_PARTITIONS && (bytes * 1.25) / count > size) count *= 2;
  return count;
}
