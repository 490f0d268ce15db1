import type { ChangeSink } from './change-order.js';
import { PartitionJoin, type JoinContext } from './hash-diff.js';
import { KeyTable } from '../key-table.js';
import { emptyCounts } from './merge-diff.js';
import { eachRecord, Part } from './partitions.js';
import { keyReader } from '../records/record-key.js';

// Joins of a small made-up partition, whose results go nowhere, run by the main thread of a
// hash diff while it waits for the worker to finish reading the older side (diff-lane.ts).
// Traced per partition (issue 22), each thread's first partition took 45-115 ms where later
// ones took 10-15: V8 ran the join in the interpreter until its optimised code arrived. Joined
// here, in time the thread would spend waiting, every case of the join (a key alike or changed
// on both sides, on one side only, twice, kept after its line) has come up before the real ones.

/** Records a side of the made-up partition. */
const RECORDS = 1024;
/** Joins of it at most. */
const ROUNDS = 16;

/** Where a warm-up's changes go: nowhere. */
class NoChanges implements ChangeSink {
  push(): void {}
  async flush(): Promise<void> {}
}

/** One side of the made-up partition: records `from` to `to` (one of them twice), `v` changed where `changed` says. */
function madeUpSide(from: number, to: number, changed: (i: number) => boolean, twice: number): Part {
  const part = new Part('', Number.MAX_SAFE_INTEGER);
  const add = (i: number) => {
    const key = `w${i}`;
    const line = Buffer.from(`{"username":"${key}","v":${changed(i) ? 1 : 0}}`);
    const hash = Math.imul(i + 1, 0x9e3779b1);
    // Every 64th key kept after its line, as a key with escapes is (partitions.ts).
    if (i % 64 === 0) part.add(line, 0, line.length, Buffer.from(key), 0, key.length, hash);
    else part.add(line, 0, line.length, line, 13, 13 + key.length, hash);
  };
  for (let i = from; i < to; i++) add(i);
  add(twice);
  part.seal();
  return part;
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** Joins a made-up partition again and again, a turn of the event loop between joins, until `done()` says to stop. */
export async function warmUpJoins(usernames: { older: string; newer: string } | undefined, done: () => boolean): Promise<void> {
  const keyStats = () => ({ missingKey: 0, duplicates: 0 });
  const names = usernames && { older: keyReader(usernames.older), newer: keyReader(usernames.newer) };
  const context: JoinContext = { names, stats: { older: keyStats(), newer: keyStats() }, counts: emptyCounts(), changes: new NoChanges(), printChanged: true };
  const older = madeUpSide(0, RECORDS, () => false, 1);
  const newer = madeUpSide(RECORDS / 4, RECORDS + RECORDS / 4, (i) => i % 13 === 0, RECORDS / 2);
  const scratch = { buffer: Buffer.alloc(0), table: new KeyTable() };
  for (let round = 0; round < ROUNDS && !done(); round++) {
    const join = new PartitionJoin(await older.load(scratch), older.records, context, scratch.table);
    for (const chunk of newer.chunks()) eachRecord(chunk, join);
    await join.lost();
    await nextTurn();
  }
}
