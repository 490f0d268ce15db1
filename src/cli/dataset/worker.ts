import { parentPort, workerData } from 'node:worker_threads';
import { loadParquet } from '../output/parquet.js';
import { DatasetWriter, type WriterRequest, type WriterSetup } from './writer.js';

// The worker thread of --dataset (dist/dataset-worker.cjs): parses each page's text, encodes
// and compresses the Parquet parts and writes them, on the second core, while the main thread
// fetches and prints. Requests are answered one by one, in order, on the parent port; a
// warning (a column left out) is posted before the answer of the request that raised it.

export type WorkerMessage = { warn: string } | { answer: ReturnType<DatasetWriter['handle']> };

const port = parentPort!;
const writer = new DatasetWriter(workerData as WriterSetup, (line) => port.postMessage({ warn: line } satisfies WorkerMessage));
let queue: Promise<void> = loadParquet();
port.on('message', (request: WriterRequest) => {
  queue = queue.then(() => port.postMessage({ answer: writer.handle(request) } satisfies WorkerMessage));
});
