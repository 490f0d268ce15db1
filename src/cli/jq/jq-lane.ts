import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { MessageChannel, Worker, receiveMessageOnPort } from 'node:worker_threads';
import { builtFile } from '../built-file.js';
import { JQ_V8_FLAGS } from './jq-v8-flags.js';
import { compileError, runBatch, type BatchResult, type BatchShape, type Jq, type JqProgram } from './jq-engine.js';
import type { JqSetup, WorkerData, WorkerRequest } from './jq-worker.js';
import { JQ_THREAD_LIMITS, takeEarlyThread, threadEnded, threadFailed, type EarlyThread } from './jq-thread-early.js';

// Where jq runs for `--jq`: a worker thread (dist/jq-worker.cjs) beside the bundle, so that jq
// works on the second core as it would at the end of a pipe; or, run from sources (tests), the
// main thread. Batches go in and answers come out in order either way.

/** A batch's answer, or what broke jq itself; `spare` is the batch's buffer, handed back to be filled again. */
export type Answer = BatchResult & { broken?: string; spare?: Uint8Array };

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

/** Why a lane can answer no more: `stopped` when the run asked it to (a signal), else jq's thread itself ended. */
export class LaneStopped extends Error {
  constructor(
    message: string,
    readonly stopped: boolean,
  ) {
    super(message);
  }
}

export async function openLane(program: JqProgram): Promise<JqLane> {
  const file = builtFile('jq-worker.cjs');
  const wasm = builtFile(join('vendor', 'build', 'jq.wasm'));
  if (file) return workerLane(file, program, wasm);
  const { loadJq } = await import('jq-wasm');
  return mainThreadLane(await loadJq(), program);
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
  const { loadJq } = await import('jq-wasm');
  // jq-wasm's runtime prints an abort with console.error as well as throwing it: the throw is sgq's one line.
  const print = console.error;
  console.error = () => undefined;
  try {
    return compileError(await loadJq({ wasmModule: module }), program);
  } finally {
    console.error = print;
  }
}

function mainThreadLane(jq: Jq, program: JqProgram): JqLane {
  let arrived: Answer[] = [];
  const take = () => arrived.splice(0);
  const lane: JqLane = {
    check: () => Promise.resolve(compileError(jq, program)),
    submit(batch, shape) {
      arrived.push({ ...runBatch(jq, program, batch, shape), spare: batch });
      lane.onAnswer?.();
    },
    poll: take,
    waitBelow: () => Promise.resolve(take()),
    inFlight: 0,
    stop() {},
    close() {
      arrived = [];
    },
  };
  return lane;
}

/**
 * The worker answers on a port of its own, in order. Waiting for an answer is a promise
 * settled by the port's messages or by the thread's end, never a blocking wait: a thread that
 * dies (out of memory, a crash) fails the run with a line, and a signal is heard while jq works.
 */
export function workerLane(file: string, program: JqProgram, wasm?: string): JqLane {
  // The thread starts with the first request (a filter jq never has to run costs none), or is
  // the one started as the line was read (jq-thread-early.ts), if there is one.
  const early = takeEarlyThread();
  const { port1, port2 } = early ? { port1: early.port, port2: undefined } : new MessageChannel();
  let worker: Worker | undefined;
  /** jq's module, compiled here for the check only (a filter of sgq's subset may never need jq); a thread started without it compiles its own. */
  let module: WebAssembly.Module | undefined;
  const start = () => (worker ??= early ? adopt(early, { program, module }, end) : startThread(file, { port: port2!, program, module }, end));
  const startWith = (compiled: WebAssembly.Module) => ((module = compiled), start());
  let [sent, received] = [0, 0];
  let ended: LaneStopped | undefined;
  const arrived: Answer[] = [];
  const waiters: { below: number; resolve: (answers: Answer[]) => void; reject: (error: LaneStopped) => void }[] = [];
  /** Moves the answers the port holds into `arrived` (they may come before their message event). */
  const drain = () => {
    for (let m = receiveMessageOnPort(port1); m; m = receiveMessageOnPort(port1)) receive(m.message as Answer);
  };
  const take = () => {
    drain();
    return arrived.splice(0);
  };
  function receive(answer: Answer): void {
    arrived.push(answer);
    received++;
  }
  /** Settles the waits that can be settled; with none left, nothing of jq's keeps sgq alive. */
  const settle = () => {
    for (const waiter of [...waiters]) {
      if (!ended && sent - received > waiter.below) continue;
      waiters.splice(waiters.indexOf(waiter), 1);
      if (ended && sent - received > waiter.below) waiter.reject(ended);
      else waiter.resolve(take());
    }
    if (waiters.length === 0) keepAlive(false, port1, worker);
  };
  const end = (why: LaneStopped) => {
    ended ??= why;
    void worker?.terminate();
    settle();
  };
  const post = (request: WorkerRequest, transfer: ArrayBuffer[] = []) => {
    start();
    port1.postMessage(request, transfer);
    sent++;
  };
  const lane: JqLane = {
    check: () => (wasm ? checkHere(wasm, program, startWith) : checkInWorker(lane, post)),
    submit: (batch, shape) => post({ kind: 'batch', batch, shape }, [batch.buffer as ArrayBuffer]),
    poll: take,
    waitBelow(n) {
      drain();
      if (sent - received <= n) return Promise.resolve(take());
      if (ended) return Promise.reject(ended);
      // Waiting: the port's next message must keep the event loop, and so sgq, alive.
      keepAlive(true, port1, worker);
      return new Promise((resolve, reject) => waiters.push({ below: n, resolve, reject }));
    },
    get inFlight() {
      return sent - received;
    },
    stop(graceMs) {
      // What jq answers within the grace (the batch the end hands it too) still reaches the output.
      if (!ended) setTimeout(() => end(new LaneStopped('the run was stopped', true)), graceMs).unref();
    },
    close() {
      ended ??= new LaneStopped('jq was closed', true);
      port1.close();
      // A thread started early and never needed (sgq's subset answered) ends here too.
      void (worker ?? early?.worker)?.terminate();
    },
  };
  port1.on('message', (message: Answer) => {
    receive(message);
    lane.onAnswer?.();
    settle();
  });
  port1.unref();
  return lane;
}

/** The check made by the worker itself, for a lane given no module. */
async function checkInWorker(lane: JqLane, post: (request: WorkerRequest) => void): Promise<string | undefined> {
  post({ kind: 'check' });
  const [answer] = (await lane.waitBelow(0)) as unknown as [{ error?: string; broken?: string }];
  if (answer.broken !== undefined) throw new Error(answer.broken);
  return answer.error;
}

/** Whether the port and the thread keep the event loop running: only while an answer is awaited. */
function keepAlive(on: boolean, ...handles: ({ ref(): void; unref(): void } | undefined)[]): void {
  for (const handle of handles) {
    if (on) handle?.ref();
    else handle?.unref();
  }
}

/** jq's thread, which ends the lane when it fails or exits (after the lane closed it, too: nothing is waiting then). */
function startThread(file: string, data: WorkerData, end: (why: LaneStopped) => void): Worker {
  return watched(new Worker(file, { workerData: data, transferList: [data.port], resourceLimits: JQ_THREAD_LIMITS }), end);
}

/** A thread started early, given the filter (its first request); one that ended meanwhile ends the lane. */
function adopt(thread: EarlyThread, setup: JqSetup, end: (why: LaneStopped) => void): Worker {
  thread.port.postMessage({ kind: 'init', ...setup } satisfies WorkerRequest);
  if (thread.ended !== undefined) queueMicrotask(() => end(new LaneStopped(thread.ended!, false)));
  return watched(thread.worker, end);
}

function watched(thread: Worker, end: (why: LaneStopped) => void): Worker {
  thread.on('error', (error) => end(new LaneStopped(threadFailed(error), false)));
  thread.on('exit', (code) => end(new LaneStopped(threadEnded(code), false)));
  thread.unref();
  return thread;
}
