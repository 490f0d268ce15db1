import { openLane, ThreadEnded, type Lane } from '../../threads/lane.js';
import { DatasetWriter, type WriterAnswer, type WriterRequest, type WriterSetup } from './writer.js';

// Where the dataset's writer runs: a worker thread (dist/dataset-worker.cjs, on the lane of
// src/threads/lane.ts), so that its parsing, encoding and GZIP take the second core; or in the
// main thread: a run that keeps snapshots (scope.ts says why), or one where a thread cannot
// start. Requests are answered in order either way, with the same answers.

export interface WriterLane {
  /** Where the writer runs, for --verbose. */
  readonly thread: 'worker' | 'main';
  /** Sends a request; its answer comes in order. Records may wait in a batch until a batch fills or settle(). */
  send(request: WriterRequest): Promise<WriterAnswer>;
  /** Resolves once the writer has room for more: what waits for it stays a few batches (bounded memory). */
  room(): Promise<void>;
  /** Sends what waits in a batch and resolves once every request sent is answered. */
  settle(): Promise<void>;
  /** Ends the thread; later requests are answered with a failure. */
  close(): Promise<void>;
}

/**
 * Records go to the thread in batches of pages: every message wakes it, which cost the main
 * thread about 0.2 ms a page on a busy machine (80 ms over a 200,000-follower export, 400
 * pages), where posting the text itself is a copy. A batch closes at 8 requests or 512K
 * characters; 4 batches unanswered make the run wait, so at most 5 batches are held (2.5M
 * characters). 4 rather than 2 let the thread catch up after a moment without a core:
 * 1.26x instead of 1.29-1.32x in the bench's dataset row, interleaved.
 */
const BATCH_REQUESTS = 8;
const BATCH_CHARS = 1 << 19;
const BATCHES_IN_FLIGHT = 4;

/**
 * The thread's young generation: V8 let it grow to 32 MiB (of garbage, mostly: each page
 * parsed, its rows handed to the columns); 8 MiB took 15-30 MiB off the peak RSS of a
 * --dataset run, for a CPU time within the noise of the runs beside it.
 */
const THREAD_LIMITS = { maxYoungGenerationSizeMb: 8 };

/** The writer's lane: requests go in batches; the thread's notes are the writer's warnings. */
type BatchLane = Lane<WriterRequest[], WriterAnswer[], string>;

/** The writer in a worker thread running `file` (by default the one beside the bundle), else (null, or no thread) in this thread. */
export async function openWriterLane(setup: WriterSetup, warn: (line: string) => void, file: string | null | undefined = 'dataset-worker.cjs'): Promise<WriterLane> {
  const here = () => {
    const writer = new DatasetWriter(setup, warn);
    return (batch: WriterRequest[]) => batch.map((request) => writer.handle(request));
  };
  const spec = { script: file ?? 'dataset-worker.cjs', name: 'its worker thread', data: setup, limits: THREAD_LIMITS };
  const lane = await openLane<WriterSetup, WriterRequest[], WriterAnswer[], string>(spec, here, { mainThread: file === null });
  lane.onNote = warn;
  return lane.thread === 'worker' ? batchedLane(lane) : mainThreadLane(lane);
}

/** A failure of the thread (or a request after close), as the writer's answer: `thread` says the writer itself never saw it. */
const threadFailure = (why: ThreadEnded): WriterAnswer => ({ failure: { message: why.stopped ? 'the dataset writer is closed' : why.message, thread: true } });

function mainThreadLane(lane: BatchLane): WriterLane {
  return {
    thread: 'main',
    send: (request) => lane.send([request]).then((answers) => answers[0]!, threadFailure),
    room: () => Promise.resolve(),
    settle: () => Promise.resolve(),
    close: () => lane.close(),
  };
}

/**
 * Requests wait in a batch until it fills, or a control request (open, cut, commit, drop: the
 * run awaits them) or settle() sends it. At most BATCHES_IN_FLIGHT batches are unanswered
 * before room() makes the run wait.
 */
function batchedLane(lane: BatchLane): WriterLane {
  let batch: WriterRequest[] = [];
  let resolvers: ((answer: WriterAnswer) => void)[] = [];
  let chars = 0;
  let closed: ThreadEnded | undefined;
  /** The last batch sent, once its requests are answered (answers come in order). */
  let last: Promise<void> = Promise.resolve();
  const flush = () => {
    if (batch.length === 0) return;
    const waiting = resolvers;
    last = lane.send(batch).then(
      (answers) => waiting.forEach((resolve, i) => resolve(answers[i] ?? { failure: { message: 'the dataset writer did not answer', thread: true } })),
      (why: ThreadEnded) => waiting.forEach((resolve) => resolve(threadFailure(why))),
    );
    [batch, resolvers, chars] = [[], [], 0];
  };
  return {
    thread: 'worker',
    send(request) {
      if (closed) return Promise.resolve(threadFailure(closed));
      const reply = new Promise<WriterAnswer>((resolve) => resolvers.push(resolve));
      batch.push(request);
      chars += 'text' in request ? request.text.length : 'ndjson' in request ? request.ndjson.length : 0;
      // Open, cut, commit and drop go at once: the run awaits them.
      const control = request.kind !== 'page' && request.kind !== 'records' && request.kind !== 'changes';
      if (control || batch.length >= BATCH_REQUESTS || chars >= BATCH_CHARS) flush();
      return reply;
    },
    async room() {
      if (lane.inFlight >= BATCHES_IN_FLIGHT) await lane.waitBelow(BATCHES_IN_FLIGHT - 1).catch(() => undefined);
    },
    async settle() {
      flush();
      await last;
    },
    async close() {
      closed = new ThreadEnded('the dataset writer is closed', true);
      for (const resolve of resolvers.splice(0)) resolve(threadFailure(closed));
      batch = [];
      await lane.close();
    },
  };
}
