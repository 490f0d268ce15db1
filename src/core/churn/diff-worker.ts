import { parentPort, workerData } from 'node:worker_threads';
import { AckWindow } from './ack-window.js';
import type { LaneJob, FromWorker, ToWorker } from './diff-lane.js';
import { errorKind } from './diff-lane.js';
import { HeldChanges } from './held-changes.js';
import { Partitions } from './partitions.js';
import { scanSide } from './side-scan.js';
import { joinRun, joinSpilled } from './spilled-join.js';

// The worker thread of a hash diff (dist/diff-worker.cjs; diff-lane.ts starts it): it reads the
// older side into the partitions the main thread named, then joins its share of them; the
// changes it finds, encoded for the main thread's ChangeOrder, it sorts itself while they are
// few, or posts as they come (held-changes.ts).

const job = workerData as LaneJob;
const port = parentPort!;
const post = (message: FromWorker) => port.postMessage(message);

/**
 * Characters of changes posted and not yet acknowledged, at most (ack-window.ts): about two
 * chunks' changes when every record changed, dozens of batches in a night's churn.
 */
const WINDOW_CHARS = 2 * 1024 * 1024;
const inFlight = new AckWindow(WINDOW_CHARS);

/** The main thread's acknowledgements of batches of changes, and its message to join. */
let onJoin: (message: Extract<ToWorker, { kind: 'join' }>) => void = () => undefined;
port.on('message', (message: ToWorker) => (message.kind === 'ack' ? inFlight.acknowledged() : onJoin(message)));

/** Posts a batch of changes, at most WINDOW_CHARS ahead of the main thread. */
async function handOver(lines: string[], chars: number): Promise<void> {
  await inFlight.room();
  inFlight.posted(chars);
  post({ kind: 'changes', lines });
}

async function scan(): Promise<Partitions> {
  const stats = { missingKey: 0, duplicates: 0 };
  const parts = new Partitions(job.paths.length, job.dir, 0, 0, job.paths);
  try {
    await scanSide({ ...job.older, stats }, parts.add, undefined, async () => undefined);
    parts.seal(true);
  } catch (error) {
    parts.discard();
    throw error;
  }
  post({ kind: 'scanned', older: { paths: parts.parts.map((p) => p.path), sizes: parts.parts.map((p) => ({ bytes: p.bytes, records: p.records })) }, missingKey: stats.missingKey });
  return parts;
}

async function join(older: Partitions, message: Extract<ToWorker, { kind: 'join' }>): Promise<void> {
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
  await inFlight.drained();
  post({ kind: 'joined', counts: run.context.counts, duplicates: { older: stats.older.duplicates, newer: stats.newer.duplicates }, held });
}

async function main(): Promise<void> {
  const older = await scan();
  const message = await new Promise<Extract<ToWorker, { kind: 'join' }>>((resolve) => (onJoin = resolve));
  await join(older, message);
  // Nothing more to hear: the worker may end.
  port.removeAllListeners('message');
}

main().catch((error: unknown) => post({ kind: 'error', name: errorKind(error), message: error instanceof Error ? error.message : String(error) }));
