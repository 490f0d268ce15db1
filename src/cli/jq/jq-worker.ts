import { setFlagsFromString } from 'node:v8';
import { threadSide } from '../../threads/serve.js';
import { answerBatch, buffersOf, compileError, type BatchShape, type JqProgram } from './jq-engine.js';
import { JQ_V8_FLAGS } from './jq-v8-flags.js';
import { beforeBatch } from './jq-thread-test-hook.js';

// The worker thread of `--jq` (dist/jq-worker.cjs, on the lane of src/threads/): jq runs here
// on the second core while the main thread fetches and parses, as `sgq … | jq` would run it.
// Requests come in order, and each is answered in turn.

export type WorkerRequest = { kind: 'check' } | { kind: 'batch'; batch: Uint8Array; shape: BatchShape };

/** What a thread started early (jq-thread-early.ts) is told once the line is read. */
export type JqNote = { kind: 'init' } & JqSetup;

export interface JqSetup {
  program: JqProgram;
  /** jq's module, compiled by the main thread (jq-lane.ts), which shares what V8 compiled of it. */
  module?: WebAssembly.Module;
}

/** The thread's data: the filter, unless it was started before the line was read (an `init` note brings it). */
const thread = threadSide<Partial<JqSetup> | undefined>();
// One wasm compilation task (JQ_V8_FLAGS): set by the main thread already when it started this
// thread early or compiled the module it shares; set here too for a module this thread compiles itself.
setFlagsFromString(JQ_V8_FLAGS);
// jq-wasm's runtime prints an abort (memory exhausted, say) with console.error as well as
// throwing it: the throw becomes sgq's one failure line, so the print would be a second.
console.error = () => undefined;
// The glue loads at once, jq itself once the filter (and the module) are known.
const glue = import('jq-wasm');
const setUp = ({ program, module }: JqSetup) => glue.then(async ({ loadJq }) => ({ program, jq: await loadJq(module ? { wasmModule: module } : undefined) }));
let loaded = thread.data?.program ? setUp(thread.data as JqSetup) : undefined;
/** An abort of jq's WebAssembly as sgq tells it: without Emscripten's advice to its own developers. */
const brokenText = (error: unknown) => (error as Error).message.replace(/\. Build with -sASSERTIONS for more info\.$/, '');

async function handle(request: WorkerRequest) {
  if (request.kind === 'batch') await beforeBatch();
  try {
    // A request comes only after the setup (the lane tells a thread started early first).
    const { jq, program } = await loaded!;
    if (request.kind === 'check') return { error: compileError(jq, program) };
    return answerBatch(jq, program, request.batch, request.shape);
  } catch (error) {
    return { broken: brokenText(error) };
  }
}

thread.serve(handle, {
  onNote: (note: JqNote) => void (loaded ??= setUp(note)),
  transfer: (answer) => ('spare' in answer ? buffersOf(answer) : []),
});
