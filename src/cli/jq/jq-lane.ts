import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { builtFile, openLane as openThreadLane, ThreadEnded, type Lane, type ThreadSpec } from '../../threads/lane.js';
import { JQ_V8_FLAGS } from './jq-v8-flags.js';
import { answerBatch, compileError, type BatchResult, type BatchShape, type Jq, type JqProgram } from './jq-engine.js';
import type { JqNote, JqSetup, WorkerRequest } from './jq-worker.js';
import { JQ_THREAD, takeEarlyThread } from './jq-thread-early.js';

// Where jq runs for `--jq`: a worker thread (dist/jq-worker.cjs, on the lane of
// src/threads/lane.ts), so that jq works on the second core as it would at the end of a pipe;
// or the main thread, where the thread's script is not built. Batches go in and answers come
// out in order either way.

/** A batch's answer, or what broke jq itself; `spare` is the batch's buffer, handed back to be filled again (holding `out`, when it fit: answerBatch). */
export type Answer = BatchResult & { broken?: string; spare?: Uint8Array };
/** The answer to a check: jq's message if the filter does not compile. */
export type CheckAnswer = { error?: string; broken?: string };

/** Why a lane can answer no more: `stopped` when the run asked it to (a signal), else jq's thread itself ended. */
export { ThreadEnded as LaneStopped };

export interface JqLane {
  /** jq's message if the filter does not compile; the filter never runs. */
  check(): Promise<string | undefined>;
  /** Hands jq a batch (jq-batch.ts); its buffer is moved to the worker, not copied, and comes back with the answer. */
  submit(batch: Uint8Array, shape: BatchShape): void;
  /** Answers that have arrived, in order, without waiting. */
  poll(): Answer[];
  /**
   * Resolves once at most `n` batches are still running, with the answers not yet taken. It
   * waits without blocking the event loop, so SIGINT and SIGTERM are heard while jq works;
   * it rejects with a LaneStopped when jq's thread ends first (stopped, or gone).
   */
  waitBelow(n: number): Promise<Answer[]>;
  /** Batches submitted and not yet answered. */
  readonly inFlight: number;
  /** Called when an answer arrives while the main thread is idle. */
  onAnswer?: () => void;
  /** The run is stopping: jq gets `graceMs` to answer what it holds, then its thread ends. */
  stop(graceMs: number): void;
  close(): void;
}

export async function openLane(program: JqProgram): Promise<JqLane> {
  return workerLane('jq-worker.cjs', program, builtFile(join('vendor', 'build', 'jq.wasm')));
}

/**
 * jq on its lane: `script` is the thread's (a name beside the bundle, or a path); with `wasm`,
 * jq's module is compiled here and shared with the thread. The thread starts with the first
 * request (a filter jq never has to run costs none), or is the one started as the line was read
 * (jq-thread-early.ts), if there is one.
 */
export async function workerLane(script: string, program: JqProgram, wasm?: string): Promise<JqLane> {
  const early = takeEarlyThread();
  const spec: ThreadSpec<JqSetup> = { ...JQ_THREAD, script, data: { program } };
  const here = async () => jqHere(await loadJq(), program);
  const lane = await openThreadLane<JqSetup, WorkerRequest, Answer & CheckAnswer, never, JqNote>(spec, here, { thread: early, lazy: true });
  // A thread started early learns the filter (and the module) as it is taken up.
  if (early) lane.onStart = () => lane.tell({ kind: 'init', ...spec.data });
  /** Starts the thread, with the module compiled here for the check (a filter of sgq's subset may never need jq). */
  const startWith = (module: WebAssembly.Module) => {
    spec.data.module = module;
    lane.start();
  };
  return jqLane(lane, lane.thread === 'worker' && wasm ? () => checkHere(wasm, program, startWith) : undefined);
}

/** jq in this thread: the handler the worker serves, run here. */
function jqHere(jq: Jq, program: JqProgram) {
  return (request: WorkerRequest): Answer & CheckAnswer => (request.kind === 'check' ? { error: compileError(jq, program), out: '', stderr: '' } : answerBatch(jq, program, request.batch, request.shape));
}

async function loadJq(): Promise<Jq> {
  const { loadJq: load } = await import('jq-wasm');
  return load();
}

/** The JqLane over a lane: answers kept in order until taken. Without `check`, the filter is checked on the lane itself. */
function jqLane(lane: Lane<WorkerRequest, Answer & CheckAnswer, never, JqNote>, check?: () => Promise<string | undefined>): JqLane {
  const arrived: Answer[] = [];
  let [polling, checking] = [false, false];
  const poll = () => {
    polling = true;
    try {
      lane.pull();
    } finally {
      polling = false;
    }
    return arrived.splice(0);
  };
  const checkOnLane = async () => {
    checking = true;
    const answer = await lane.send({ kind: 'check' });
    if (answer.broken !== undefined) throw new Error(answer.broken);
    return answer.error;
  };
  const jq: JqLane = {
    check: check ?? checkOnLane,
    submit: (batch, shape) => void lane.send({ kind: 'batch', batch, shape }, [batch.buffer as ArrayBuffer]),
    poll,
    waitBelow: (n) => lane.waitBelow(n).then(poll),
    get inFlight() {
      return lane.inFlight;
    },
    stop: (graceMs) => lane.stop(graceMs),
    close: () => void lane.close(),
  };
  lane.onAnswer = (answer) => {
    // The check's answer is the check's own, not a batch's.
    if (checking) return void (checking = false);
    arrived.push(answer);
    if (!polling) jq.onAnswer?.();
  };
  return jq;
}

/**
 * jq's WebAssembly compiled once, here, and shared with the worker: V8 compiles its functions
 * when first called, for every instance of the module, so the functions the filter's check
 * runs on this thread are compiled already when the worker runs its first batch.
 */
function compiledJq(wasm: string): WebAssembly.Module {
  // One compilation task (JQ_V8_FLAGS says why): set before the module exists, if the early
  // thread's start has not set it already; only wasm compilation reads it.
  setFlagsFromString(JQ_V8_FLAGS);
  // (sgq's TypeScript library has WebAssembly's types, not its value)
  const { WebAssembly: wasmApi } = globalThis as unknown as { WebAssembly: { Module: new (bytes: Uint8Array) => WebAssembly.Module } };
  return new wasmApi.Module(readFileSync(wasm));
}

/**
 * jq's message if the filter does not compile, checked in this thread on an instance of the
 * shared module while the worker starts (a thread takes some 25 ms to start): the check, which
 * must end before the first request, no longer waits for the thread. The instance is dropped.
 */
async function checkHere(wasm: string, program: JqProgram, starting: (module: WebAssembly.Module) => void): Promise<string | undefined> {
  const module = compiledJq(wasm);
  starting(module);
  const { loadJq: load } = await import('jq-wasm');
  // jq-wasm's runtime prints an abort with console.error as well as throwing it: the throw is sgq's one line.
  const print = console.error;
  console.error = () => undefined;
  try {
    return compileError(await load({ wasmModule: module }), program);
  } finally {
    console.error = print;
  }
}
