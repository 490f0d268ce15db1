import { threadSide } from '../../threads/serve.js';
import type { ChangesNote, FromWorker, LaneJob, ToWorker } from './diff-lane.js';
import { errorKind } from './diff-lane.js';
import { HeldChanges } from './held-changes.js';
import { Partitions } from './partitions.js';
import { scanSide } from './side-scan.js';
import { joinRun, joinSpilled } from './spilled-join.js';
import { RUN_CHARS } from '../sort/external-sort.js';

// The worker thread of a hash diff (dist/diff-worker.cjs; diff-lane.ts starts it, on the lane
// of src/threads/): asked, it reads the older side into the partitions the main thread named,
// then, asked again, joins its share of them; the changes it finds, encoded for the main
// thread's ChangeOrder, it sorts itself while they are few, or posts as they come
// (held-changes.ts), in the lane's window.

/**
 * Characters of changes posted and not yet acknowledged, at most (the lane's window,
 * src/threads/ack-window.ts): about two chunks' changes when every record changed, dozens of
 * batches in a night's churn; no more than a run of the main thread's sort under a capped
 * heap (RUN_CHARS), where the window's changes arrive while a run is being written.
 */
const WINDOW_CHARS = Math.min(2 * 1024 * 1024, RUN_CHARS);
const thread = threadSide<LaneJob, ChangesNote>(WINDOW_CHARS);
const job = thread.data;

/** Posts a batch of changes, at most WINDOW_CHARS ahead of the main thread. */
const handOver = (lines: string[], chars: number): Promise<void> => thread.noteInWindow(lines, chars);

async function scan(): Promise<FromWorker> {
  const stats = { missingKey: 0, duplicates: 0 };
  const parts = new Partitions(job.paths.length, job.dir, 0, 0, job.paths);
  try {
    await scanSide({ ...job.older, stats }, parts.add, undefined, async () => undefined);
    parts.seal(true);
  } catch (error) {
    parts.discard();
    throw error;
  }
  older = parts;
  return { kind: 'scanned', older: { paths: parts.parts.map((p) => p.path), sizes: parts.parts.map((p) => ({ bytes: p.bytes, records: p.records })) }, missingKey: stats.missingKey };
}

async function join(older: Partitions, message: Extract<ToWorker, { kind: 'join' }>): Promise<FromWorker> {
  const newer = Partitions.written(job.dir, message.newer.paths, message.newer.sizes);
  const stats = { older: { missingKey: 0, duplicates: 0 }, newer: { missingKey: 0, duplicates: 0 } };
  const changes = new HeldChanges(job.holdChars, handOver);
  const run = joinRun({ names: job.names, stats, changes, printChanged: job.printChanged, size: job.size, dir: job.dir });
  const next = new Int32Array(job.next);
  // The main thread keeps for itself any partition that must be split again: only it makes files.
  for (let at = Atomics.add(next, 0, 1); at < message.order.length; at = Atomics.add(next, 0, 1)) {
    const part = message.order[at]!;
    await joinSpilled(older.parts[part]!, newer.parts[part]!, older.bits, run);
    changes.endPartition();
  }
  const held = await changes.end();
  await thread.drained();
  return { kind: 'joined', counts: run.context.counts, duplicates: { older: stats.older.duplicates, newer: stats.newer.duplicates }, held };
}

/** The older side's partitions, once scanned. */
let older: Partitions | undefined;

/** A request's answer; an error goes back as an answer, by kind, to be thrown again as this thread's own there. */
async function handle(request: ToWorker): Promise<FromWorker> {
  try {
    return request.kind === 'scan' ? await scan() : await join(older!, request);
  } catch (error) {
    return { kind: 'error', name: errorKind(error), message: error instanceof Error ? error.message : String(error) };
  }
}

thread.serve(handle);
