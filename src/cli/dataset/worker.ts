import { threadSide } from '../../threads/serve.js';
import { DatasetWriter, type WriterRequest, type WriterSetup } from './writer.js';

// The worker thread of --dataset (dist/dataset-worker.cjs, on the lane of src/threads/):
// parses each page's text, encodes and compresses the Parquet parts and writes them, on the
// second core, while the main thread fetches and prints. Requests come in batches (writer-lane.ts)
// and are answered in order; a warning (a column left out) is a note, posted before the
// answers of the batch that raised it.

const thread = threadSide<WriterSetup, string>();
const writer = new DatasetWriter(thread.data, (line) => thread.note(line));
thread.serve((batch: WriterRequest[]) => {
  return batch.map((request) => writer.handle(request));
});
