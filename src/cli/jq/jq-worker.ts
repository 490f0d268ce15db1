import { setFlagsFromString } from 'node:v8';
import { workerData, type MessagePort } from 'node:worker_threads';
import { compileError, runBatch, type BatchShape, type JqProgram } from './jq-engine.js';
import { JQ_V8_FLAGS } from './jq-v8-flags.js';
import { beforeBatch } from './jq-thread-test-hook.js';

// The worker thread of `--jq` (dist/jq-worker.cjs): jq runs here on the second core while the
// main thread fetches and parses, as `sgq … | jq` would run it. Requests come in order on the
// port, and each is answered on it in turn.

export type WorkerRequest =
  | { kind: 'check' }
  | { kind: 'batch'; batch: Uint8Array; shape: BatchShape }
  /** What a thread started early (jq-thread-early.ts) is given first, once the line is read. */
  | ({ kind: 'init' } & JqSetup);

export interface JqSetup {
  program: JqProgram;
  /** jq's module, compiled by the main thread (jq-lane.ts), which shares what V8 compiled of it. */
  module?: WebAssembly.Module;
}

/** The thread's data: its port, and the filter unless it was started before the line was read (an `init` request brings it). */
export type WorkerData = { port: MessagePort } & Partial<JqSetup>;

const { port, ...given } = workerData as WorkerData;
// One wasm compilation task (JQ_V8_FLAGS): set by the main thread already when it started this
// thread early or compiled the module it shares; set here too for a module this thread compiles itself.
setFlagsFromString(JQ_V8_FLAGS);
// jq-wasm's runtime prints an abort (memory exhausted, say) with console.error as well as
// throwing it: the throw becomes sgq's one failure line, so the print would be a second.
console.error = () => undefined;
// The glue loads at once, jq itself once the filter (and the module) are known.
const glue = import('jq-wasm');
const setUp = ({ program, module }: JqSetup) => glue.then(async ({ loadJq }) => ({ program, jq: await loadJq(module ? { wasmModule: module } : undefined) }));
let loaded = given.program ? setUp(given as JqSetup) : undefined;
/** An abort of jq's WebAssembly as sgq tells it: without Emscripten's advice to its own developers. */
const brokenText = (error: unknown) => (error as Error).message.replace(/\. Build with -sASSERTIONS for more info\.$/, '');

const answer = (message: unknown, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);

let queue = Promise.resolve();
port.on('message', (request: WorkerRequest) => {
  if (request.kind === 'init') {
    loaded ??= setUp(request);
    return;
  }
  queue = queue.then(async () => {
    if (request.kind === 'batch') await beforeBatch();
    try {
      // A request comes only after the setup (the lane sends `init` first to a thread started early).
      const { jq, program } = await loaded!;
      if (request.kind === 'check') answer({ error: compileError(jq, program) });
      // The batch's buffer goes back with the answer, to be filled again, and jq's output bytes
      // go with it (no copy either way).
      else {
        const result = runBatch(jq, program, request.batch, request.shape);
        const transfer = [request.batch.buffer as ArrayBuffer];
        // Only a buffer the output has to itself moves; a view of a larger one is copied.
        const { out } = result;
        if (typeof out !== 'string' && out.byteOffset === 0 && out.byteLength === out.buffer.byteLength) transfer.push(out.buffer as ArrayBuffer);
        answer({ ...result, spare: request.batch }, transfer);
      }
    } catch (error) {
      answer({ broken: brokenText(error) });
    }
  });
});
