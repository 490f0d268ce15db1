import { open } from 'node:fs/promises';
import type { JsonObject } from '../classify.js';
import { Cursor, type Keyed } from '../records/keyed.js';
import { recordKey } from '../records/record-key.js';
import { snapshotRecords } from '../records/sources.js';
import type { SnapshotMeta, SnapshotStore, SnapshotSubject, StagedSnapshot, StoredSnapshot } from './store.js';

// A partial snapshot of `--full-every` (full-every.ts): the snapshot before it with what came
// since merged in, one pass over both in key order, a record that came again replacing the
// one kept. And the check that the service honoured `since`: an answer that mostly repeats
// what the kept snapshot holds is the whole list again, not what came since.

/** How many of `records` the snapshot holds, by the field it is keyed by; `unkeyed` lack that field. */
export interface HeldShare {
  held: number;
  unkeyed: number;
}

/** Counts the records `snapshot` already holds: one pass over it, stopped past the largest key asked. */
export async function heldShare(snapshot: StoredSnapshot, records: readonly JsonObject[]): Promise<HeldShare> {
  const field = snapshot.meta.sorted_by;
  const keys = new Set<string>();
  let unkeyed = 0;
  for (const record of records) {
    const key = recordKey(record, field);
    if (key === undefined) unkeyed++;
    else keys.add(key);
  }
  if (keys.size === 0) return { held: 0, unkeyed };
  const last = [...keys].reduce((a, b) => (b > a ? b : a));
  let held = 0;
  const handle = await open(snapshot.dataPath, 'r');
  try {
    const stats = { missingKey: 0, duplicates: 0 };
    read: for await (const batch of snapshotRecords(handle, field, stats, snapshot.dataPath)) {
      for (const { key } of batch) {
        if (key > last) break read;
        if (keys.has(key)) held++;
      }
    }
  } finally {
    await handle.close();
  }
  return { held, unkeyed };
}

const BATCH = 1000;

/** Both sides in key order, merged: every key once, the newer side's record where both have it. */
export async function* mergeOnto(older: AsyncIterable<Keyed[]>, newer: AsyncIterable<Keyed[]>): AsyncGenerator<Keyed[]> {
  const a = new Cursor(older[Symbol.asyncIterator]());
  const b = new Cursor(newer[Symbol.asyncIterator]());
  let liveA = await a.next();
  let liveB = await b.next();
  let out: Keyed[] = [];
  try {
    while (liveA || liveB) {
      const takeB = liveB && (!liveA || b.current.key <= a.current.key);
      if (takeB && liveA && b.current.key === a.current.key) liveA = a.advance() || (await a.next());
      out.push(takeB ? b.current : a.current);
      if (takeB) liveB = b.advance() || (await b.next());
      else liveA = a.advance() || (await a.next());
      if (out.length >= BATCH) {
        yield out;
        out = [];
      }
    }
    if (out.length) yield out;
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
}

/**
 * Stages a partial snapshot of `subject` (the caller holds its lock): `base`, the last
 * snapshot, with `came` (what came since, in order of the field base is keyed by) merged in.
 */
export async function stagePartial(store: SnapshotStore, subject: SnapshotSubject, base: StoredSnapshot, came: AsyncIterable<Keyed[]>, meta: Pick<SnapshotMeta, 'taken_at' | 'credits_used' | 'pages' | 'since'>): Promise<StagedSnapshot> {
  const handle = await open(base.dataPath, 'r');
  try {
    const stats = { missingKey: 0, duplicates: 0 };
    const merged = mergeOnto(snapshotRecords(handle, base.meta.sorted_by, stats, base.dataPath), came);
    return await store.stage(subject, merged, { ...meta, complete: true, partial: true, sorted_by: base.meta.sorted_by, identity: base.meta.identity });
  } finally {
    await handle.close();
  }
}
