import { MessageChannel, Worker, receiveMessageOnPort } from 'node:worker_threads';
import { builtFile } from '../built-file.js';
import { compileError, runBatch, type BatchResult, type Jq, type JqProgram } from './jq-engine.js';
import type { WorkerRequest } from './jq-worker.js';

// Where jq runs for `--jq`: a worker thread (dist/jq-worker.cjs) beside the bundle, so that jq
// works on the second core as it would at the end of a pipe; or, run from sources (tests), the
// main thread. Batches go in and answers come out in order either way.

/** A batch's answer, or what broke jq itself; `spare` is the batch's buffer, handed back to be filled again. */
export type Answer = BatchResult & { broken?: string; spare?: Uint8Array };

export interface JqLane {
  /** jq's message if the filter does not compile; the filter never runs. */
  check(): Promise<string | undefined>;
  /** Hands jq a batch (jq-batch.ts); its buffer is moved to the worker, not copied, and comes back with the answer. */
  submit(batch: Uint8Array, slurp: boolean): void;
  /** Answers that have arrived, in order, without waiting. */
  poll(): Answer[];
  /** Waits until at most `n` batches are still running; returns the answers not yet taken. */
  waitBelow(n: number): Answer[];
  /** Batches submitted and not yet answered. */
  readonly inFlight: number;
  /** Called when an answer arrives while the main thread is idle. */
  onAnswer?: () => void;
  close(): void;
}

export async function openLane(program: JqProgram): Promise<JqLane> {
  const file = builtFile('jq-worker.cjs');
  if (file) return workerLane(file, program);
  const { loadJq } = await import('jq-wasm');
  return mainThreadLane(await loadJq(), program);
}

function mainThreadLane(jq: Jq, program: JqProgram): JqLane {
  let arrived: Answer[] = [];
  const take = () => arrived.splice(0);
  const lane: JqLane = {
    check: () => Promise.resolve(compileError(jq, program)),
    submit(batch, slurp) {
      arrived.push({ ...runBatch(jq, program, batch, slurp), spare: batch });
      lane.onAnswer?.();
    },
    poll: take,
    waitBelow: take,
    inFlight: 0,
    close() {
      arrived = [];
    },
  };
  return lane;
}

/**
 * The worker answers on a port of its own and then moves a shared counter: blocking on the
 * counter (Atomics.wait) and taking the answers with receiveMessageOnPort makes waiting for
 * jq synchronous, as a formatter's write and end are.
 */
function workerLane(file: string, program: JqProgram): JqLane {
  const { port1, port2 } = new MessageChannel();
  const done = new Int32Array(new SharedArrayBuffer(4));
  // Started with the first request: a filter that jq never has to run (jq-subset.ts) costs no thread.
  let worker: Worker | undefined;
  let sent = 0;
  let received = 0;
  const arrived: Answer[] = [];
  const receive = (answer: Answer) => {
    arrived.push(answer);
    received++;
  };
  const take = () => {
    for (let m = receiveMessageOnPort(port1); m; m = receiveMessageOnPort(port1)) receive(m.message as Answer);
    return arrived.splice(0);
  };
  const post = (request: WorkerRequest, transfer: ArrayBuffer[] = []) => {
    if (!worker) {
      // A small young generation: the worker's garbage is jq's output text, a page or two at a time.
      worker = new Worker(file, { workerData: { port: port2, done, program }, transferList: [port2], resourceLimits: { maxYoungGenerationSizeMb: 4 } });
      // It never keeps sgq alive: every wait for an answer blocks, so none is left behind at exit.
      worker.unref();
    }
    port1.postMessage(request, transfer);
    sent++;
  };
  const waitFor = (count: number) => {
    for (let seen = Atomics.load(done, 0); seen < count; seen = Atomics.load(done, 0)) Atomics.wait(done, 0, seen);
  };
  const lane: JqLane = {
    check() {
      post({ kind: 'check' });
      waitFor(sent);
      const [answer] = take() as unknown as [{ error?: string; broken?: string }];
      if (answer.broken !== undefined) throw new Error(answer.broken);
      return Promise.resolve(answer.error);
    },
    submit: (batch, slurp) => post({ kind: 'batch', batch, slurp }, [batch.buffer as ArrayBuffer]),
    poll: take,
    waitBelow(n) {
      waitFor(sent - n);
      return take();
    },
    get inFlight() {
      return sent - received;
    },
    close() {
      port1.close();
      void worker?.terminate();
    },
  };
  port1.on('message', (message: Answer) => {
    receive(message);
    lane.onAnswer?.();
  });
  port1.unref();
  return lane;
}
