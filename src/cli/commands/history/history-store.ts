import { open } from 'node:fs/promises';
import type { JsonObject } from '../../../core/classify.js';
import { parseJson } from '../../../core/json.js';
import { comparable, countSnapshot, diffSnapshots, type OpenSnapshot, type SnapshotCounts, type SnapshotStore, type SnapshotSubject, type StoredSnapshot } from '../../../core/snapshots/snapshots.js';
import { ListCollector, inPeriod, personOf, type HistoryRecord, type HistorySeries, type Period, type SnapshotLists } from './history-series.js';

// `sgq history` from the snapshot store: each snapshot's numbers from its metadata (its
// count, and what it came with when it committed; a store of an older sgq is counted once
// and the counts kept), and for the page the accounts that came and went, diffed again.

export interface StoreHistoryOptions {
  /** With --html: who came and who left at each snapshot. */
  lists: boolean;
  warn: (line: string) => void;
  signal?: AbortSignal;
}

/** A user's history in the period; undefined when the store holds no snapshot of it. */
export async function storeSeries(store: SnapshotStore, subject: SnapshotSubject, period: Period, options: StoreHistoryOptions): Promise<HistorySeries | undefined> {
  const tempDir = store.folder(subject);
  const count = async (previous: OpenSnapshot | undefined, current: OpenSnapshot): Promise<SnapshotCounts | undefined> => {
    try {
      return await countSnapshot(previous, current, { tempDir, signal: options.signal });
    } catch (error) {
      if (options.signal?.aborted) throw error;
      options.warn(`${subject.user}: the snapshot of ${current.meta.taken_at} cannot be compared with the one before (${(error as Error).message}): its gained and lost are null`);
      return undefined;
    }
  };
  const history = await store.countHistory(subject, count);
  if (!history.length) return undefined;
  const chosen = history.filter((s) => inPeriod(period, s.meta.taken_at));
  const records = chosen.map((s): HistoryRecord => {
    const counts = s.meta.counts;
    return { user: subject.user, route: subject.route, taken_at: s.meta.taken_at, count: s.meta.records, count_is_upper_bound: s.meta.partial === true, gained: counts?.gained ?? null, lost: counts?.lost ?? null };
  });
  const series: HistorySeries = { user: subject.user, route: subject.route, records };
  if (options.lists) series.lists = await listsOf(store, subject, history, chosen, options);
  return series;
}

/**
 * Who came and who left at each chosen snapshot that has one before it. The pairs' files are
 * opened by name without the store's lock (data files are never rewritten, and an open file
 * outlives a prune): one that a prune removed meanwhile is left out.
 */
async function listsOf(store: SnapshotStore, subject: SnapshotSubject, history: StoredSnapshot[], chosen: StoredSnapshot[], options: StoreHistoryOptions): Promise<SnapshotLists[]> {
  const out: SnapshotLists[] = [];
  for (const current of chosen) {
    const previous = history[history.indexOf(current) - 1];
    if (!comparable(previous, current)) continue;
    const pair = await openPair(previous, current);
    if (!pair) continue;
    try {
      const lists = new ListCollector(current.meta.taken_at);
      await diffSnapshots(pair[0], pair[1], {
        tempDir: store.folder(subject),
        signal: options.signal,
        emit: async (changes) => {
          for (const c of changes) if (c.change === 'gained' || c.change === 'lost') lists.add(c.change, () => personOf(parseJson(c.line) as JsonObject));
        },
      });
      out.push(lists.result);
    } catch (error) {
      if (options.signal?.aborted) throw error;
      options.warn(`${subject.user}: who came and left at ${current.meta.taken_at} cannot be listed (${(error as Error).message})`);
    } finally {
      await Promise.all(pair.map((s) => s.handle.close()));
    }
  }
  return out;
}

/** Both snapshots with their data files open; undefined when one was pruned meanwhile. */
async function openPair(previous: StoredSnapshot, current: StoredSnapshot): Promise<[OpenSnapshot, OpenSnapshot] | undefined> {
  const opened: OpenSnapshot[] = [];
  try {
    for (const s of [previous, current]) opened.push({ ...s, handle: await open(s.dataPath, 'r') });
    return opened as [OpenSnapshot, OpenSnapshot];
  } catch (error) {
    await Promise.all(opened.map((s) => s.handle.close()));
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
