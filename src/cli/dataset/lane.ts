import { Worker } from 'node:worker_threads';
import { builtFile } from '../built-file.js';
import type { WorkerMessage } from './worker.js';
import { DatasetWriter, type WriterAnswer, type WriterRequest, type WriterSetup } from './writer.js';

// Where the dataset's writer runs: a worker thread (dist/dataset-worker.cjs, beside the
// bundle), so that its parsing, encoding and GZIP take the second core; or in the main thread:
// a run that keeps snapshots (scope.ts says why), one run from sources (tests), or one where a
// thread cannot start. Requests are answered in order either way, with the same answers.

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

/** The writer in a worker thread running `file` (by default the one beside the bundle), else (null) in this thread. */
export async function openWriterLane(setup: WriterSetup, warn: (line: string) => void, file: string | null | undefined = builtFile('dataset-worker.cjs')): Promise<WriterLane> {
  if (file) {
    try {
      return workerLane(new Worker(file, { workerData: setup, resourceLimits: THREAD_LIMITS }), warn);
    } catch {
      // A thread that cannot start (resource limits): the same writer in this thread.
    }
  }
  return mainThreadLane(new DatasetWriter(setup, warn));
}

function mainThreadLane(writer: DatasetWriter): WriterLane {
  let closed = false;
  return {
    thread: 'main',
    send: (request) => Promise.resolve(closed ? { failure: { message: 'the dataset writer is closed' } } : writer.handle(request)),
    room: () => Promise.resolve(),
    settle: () => Promise.resolve(),
    close: async () => void (closed = true),
  };
}

/** A batch posted to the thread: its requests' resolvers, in order, and the promise of its answers. */
interface Posted {
  resolvers: ((answer: WriterAnswer) => void)[];
  answered: Promise<void>;
  done: () => void;
}

/**
 * The thread keeps the process alive only while a batch waits for its answers (the run
 * awaits them); idle, it is unref()ed, and close() terminates it.
 */
function workerLane(worker: Worker, warn: (line: string) => void): WriterLane {
  const posted: Posted[] = [];
  let batch: WriterRequest[] = [];
  let resolvers: Posted['resolvers'] = [];
  let chars = 0;
  let broken: WriterAnswer | undefined;
  worker.unref();

  const flush = () => {
    if (batch.length === 0) return;
    if (posted.length === 0) worker.ref();
    let done!: () => void;
    const answered = new Promise<void>((resolve) => (done = resolve));
    posted.push({ resolvers, answered, done });
    worker.postMessage(batch);
    batch = [];
    resolvers = [];
    chars = 0;
  };
  const answer = (answers: readonly WriterAnswer[]) => {
    const batchDone = posted.shift();
    if (!batchDone) return;
    batchDone.resolvers.forEach((resolve, i) => resolve(answers[i] ?? broken ?? { failure: { message: 'the dataset writer did not answer' } }));
    batchDone.done();
    if (posted.length === 0) worker.unref();
  };
  // A thread that died (out of memory, a bug) fails every request waiting and every later one.
  const fail = (message: string) => {
    broken ??= { failure: { message, thread: true } };
    while (posted.length > 0) answer([]);
    for (const resolve of resolvers.splice(0)) resolve(broken);
    batch = [];
  };
  worker.on('message', (message: WorkerMessage) => ('warn' in message ? warn(message.warn) : answer(message.answers)));
  worker.on('error', (error) => fail(`its worker thread failed: ${error.message}`));
  worker.on('exit', () => fail('its worker thread ended'));

  return {
    thread: 'worker',
    send(request) {
      if (broken) return Promise.resolve(broken);
      const reply = new Promise<WriterAnswer>((resolve) => resolvers.push(resolve));
      batch.push(request);
      chars += 'text' in request ? request.text.length : 'ndjson' in request ? request.ndjson.length : 0;
      // Open, cut, commit and drop go at once: the run awaits them.
      const control = request.kind !== 'page' && request.kind !== 'records' && request.kind !== 'changes';
      if (control || batch.length >= BATCH_REQUESTS || chars >= BATCH_CHARS) flush();
      return reply;
    },
    async room() {
      while (posted.length >= BATCHES_IN_FLIGHT) await posted[0]!.answered;
    },
    async settle() {
      flush();
      while (posted.length > 0) await posted[posted.length - 1]!.answered;
    },
    async close() {
      fail('the dataset writer is closed');
      await worker.terminate();
    },
  };
}
