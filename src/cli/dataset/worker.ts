import { parentPort, workerData } from 'node:worker_threads';
import { DatasetWriter, type WriterAnswer, type WriterRequest, type WriterSetup } from './writer.js';

// The worker thread of --dataset (dist/dataset-worker.cjs): parses each page's text, encodes
// and compresses the Parquet parts and writes them, on the second core, while the main thread
// fetches and prints. Requests are answered in order, on the parent port; a warning (a
// column left out) is posted before the answers of the batch that raised it.

export type WorkerMessage = { warn: string } | { answers: WriterAnswer[] };

const port = parentPort!;
const writer = new DatasetWriter(workerData as WriterSetup, (line) => port.postMessage({ warn: line } satisfies WorkerMessage));
let queue: Promise<unknown> = Promise.resolve();
// Requests come in batches (lane.ts): one message, and one answer, for several pages.
port.on('message', (batch: WriterRequest[]) => {
  queue = queue.then(() => port.postMessage({ answers: batch.map((request) => writer.handle(request)) } satisfies WorkerMessage));
});
