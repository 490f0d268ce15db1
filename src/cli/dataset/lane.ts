import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { loadParquet } from '../output/parquet.js';
import type { WorkerMessage } from './worker.js';
import { DatasetWriter, type WriterAnswer, type WriterRequest, type WriterSetup } from './writer.js';

// Where the dataset's writer runs: a worker thread (dist/dataset-worker.cjs, beside the
// bundle), so that its parsing, encoding and GZIP take the second core; or, run from sources
// (tests) or where a thread cannot start, the main thread. Requests are answered in order
// either way, with the same answers.

export interface WriterLane {
  /** Where the writer runs, for --verbose. */
  readonly thread: 'worker' | 'main';
  /** Sends a request; its answer comes in order. */
  send(request: WriterRequest): Promise<WriterAnswer>;
  /** Resolves once fewer than `n` requests are unanswered. */
  below(n: number): Promise<void>;
  /** Ends the thread; later requests are answered with a failure. */
  close(): Promise<void>;
}

/** The worker's file beside the bundle, if sgq runs from dist/. */
function workerFile(): string | undefined {
  if (typeof __dirname !== 'string') return undefined;
  const file = join(__dirname, 'dataset-worker.cjs');
  return existsSync(file) ? file : undefined;
}

/** The writer in a worker thread running `file` (by default the one beside the bundle), else in this thread. */
export async function openWriterLane(setup: WriterSetup, warn: (line: string) => void, file = workerFile()): Promise<WriterLane> {
  if (file) {
    try {
      return workerLane(new Worker(file, { workerData: setup }), warn);
    } catch {
      // A thread that cannot start (resource limits): the same writer in this thread.
    }
  }
  await loadParquet();
  return mainThreadLane(new DatasetWriter(setup, warn));
}

function mainThreadLane(writer: DatasetWriter): WriterLane {
  let closed = false;
  return {
    thread: 'main',
    send: (request) => Promise.resolve(closed ? { failure: { message: 'the dataset writer is closed' } } : writer.handle(request)),
    below: () => Promise.resolve(),
    close: async () => void (closed = true),
  };
}

/**
 * The thread keeps the process alive only while a request waits for its answer (the run
 * awaits it); idle, it is unref()ed, and close() terminates it.
 */
function workerLane(worker: Worker, warn: (line: string) => void): WriterLane {
  const waiting: { resolve: (answer: WriterAnswer) => void; answered: Promise<void> }[] = [];
  let broken: WriterAnswer | undefined;
  worker.unref();
  const settle = (answer: WriterAnswer) => {
    waiting.shift()?.resolve(answer);
    if (waiting.length === 0) worker.unref();
  };
  // A thread that died (out of memory, a bug) fails every request waiting and every later one.
  const fail = (message: string) => {
    broken ??= { failure: { message } };
    while (waiting.length > 0) settle(broken);
  };
  worker.on('message', (message: WorkerMessage) => ('warn' in message ? warn(message.warn) : settle(message.answer)));
  worker.on('error', (error) => fail(`its worker thread failed: ${error.message}`));
  worker.on('exit', () => fail('its worker thread ended'));
  return {
    thread: 'worker',
    send(request) {
      if (broken) return Promise.resolve(broken);
      if (waiting.length === 0) worker.ref();
      let resolve!: (answer: WriterAnswer) => void;
      const answer = new Promise<WriterAnswer>((r) => (resolve = r));
      waiting.push({ resolve, answered: answer.then(() => undefined) });
      worker.postMessage(request);
      return answer;
    },
    async below(n) {
      while (waiting.length >= n) await waiting[waiting.length - n]!.answered;
    },
    async close() {
      fail('the dataset writer is closed');
      await worker.terminate();
    },
  };
}
