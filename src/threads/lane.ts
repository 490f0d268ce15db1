import { existsSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { MessageChannel, Worker, receiveMessageOnPort, type MessagePort, type ResourceLimits } from 'node:worker_threads';

// One worker lane: work on a second core, as --jq, --dataset and sgq diff have it. Requests go
// to a worker thread (a script the build puts beside the bundle, dist/NAME.cjs) and their
// answers come back in order; the buffers named with a request or an answer are moved, not
// copied. A thread that fails or ends with requests unanswered fails them with one line (the
// answers it gave before reach the caller first); a stop gives the thread a grace, then ends
// it. Whether work gets a thread or runs in the main thread is decided here alone: it gets one
// when the script is built and the thread starts. This is the one file of src/ that starts a
// thread (lint holds every other to it); the thread's side is serve.ts.

/** A message to the thread: a request (answered in turn), a note (heard at once, out of turn), or the acknowledgement of a note in its window. */
export type ToThread<Req, Note> = { request: Req } | { note: Note } | { ack: true };
/** A message from the thread: the answer to the oldest request unanswered, or a note (`ack`: one of its window, to acknowledge). */
export type FromThread<Ans, Note> = { answer: Ans } | { note: Note; ack?: true };
/** What a thread is started with: the port of its lane, and the lane's data. */
export interface ThreadData<D> {
  port: MessagePort;
  data: D;
}

/** Why a lane answers no more: `stopped` when it was stopped or closed, else its thread itself ended. */
export class ThreadEnded extends Error {
  constructor(
    message: string,
    readonly stopped: boolean,
  ) {
    super(message);
  }
}

export interface ThreadSpec<D> {
  /** The built script's name beside the bundle ('jq-worker.cjs'), or a path. */
  script: string;
  /** What the thread is called in a failure's line: "jq's thread". */
  name: string;
  data: D;
  limits?: ResourceLimits;
}

/** In the main thread, a lane's work: the same handler the thread serves (serve.ts). */
export type Handler<Req, Ans> = (request: Req) => Ans;

export interface Lane<Req, Ans, NoteIn = never, NoteOut = never> {
  readonly thread: 'worker' | 'main';
  /** Sends a request; its answer resolves the promise (already caught: ignoring it is safe) and goes to onAnswer, in order. */
  send(request: Req, transfer?: ArrayBuffer[]): Promise<Ans>;
  /** A note to the thread, heard out of turn (an acknowledgement). */
  tell(note: NoteOut): void;
  /** Called with each answer as it is taken, in order, before its promise settles. */
  onAnswer?: (answer: Ans) => void;
  /** Called with each note of the thread; a note of its window is acknowledged once what this returns settles (fulfilled). */
  onNote?: (note: NoteIn) => unknown;
  /** Takes the answers already on the port without waiting (onAnswer hears them). */
  pull(): void;
  /** Resolves once at most `n` requests are unanswered; rejects with a ThreadEnded if the thread ends first. Never blocks: signals are heard. */
  waitBelow(n: number): Promise<void>;
  /** Requests sent and not yet answered. */
  readonly inFlight: number;
  /** The run is stopping: the thread gets `graceMs` to answer what it holds, then it ends. */
  stop(graceMs: number): void;
  /** Ends the thread; what is unanswered, and every later request, fails with a ThreadEnded. */
  close(): Promise<void>;
  /** Starts the thread of a lazy lane now (else its first message does). */
  start(): void;
  /** Called as the thread is taken up, before its first message. */
  onStart?: () => void;
}

export interface LaneOptions {
  /** The work in this thread, whatever is built. */
  mainThread?: boolean;
  /** A thread started already (early, before the lane's data was known), to take up. */
  thread?: Thread;
  /** The thread starts with the lane's first message, not at once: work never asked for costs no thread. */
  lazy?: boolean;
}

/**
 * A file the build puts beside the bundle (dist/): a thread's script, jq's WebAssembly. Run
 * from sources (the tests), the same built file, from the checkout's dist/, which the tests'
 * setup builds: tests run the thread users run. Undefined when it is not built.
 */
export function builtFile(name: string): string | undefined {
  if (isAbsolute(name)) return existsSync(name) ? name : undefined;
  if (typeof __dirname !== 'string') return undefined;
  const file = __filename.endsWith('.ts') ? join(__dirname, '..', '..', 'dist', name) : join(__dirname, name);
  return existsSync(file) ? file : undefined;
}

let threadsStarted = 0;
/** Threads started by this process so far: the tests' proof that a thread, not the fallback, ran. */
export const startedThreads = (): number => threadsStarted;

/** A started thread, whose end is noted from its start (a thread started early may end before a lane watches it). */
export class Thread {
  ended?: ThreadEnded;
  private onEnd?: (why: ThreadEnded) => void;

  constructor(
    readonly worker: Worker,
    /** The lane's side of the thread's port. */
    readonly port: MessagePort,
    readonly name: string,
  ) {
    worker.on('error', (error) => this.end(new ThreadEnded(`${name} failed: ${error.message}`, false)));
    worker.on('exit', (code) => this.end(new ThreadEnded(`${name} ended (exit code ${code}) before it answered`, false)));
    // Nothing of it keeps sgq alive until a lane waits on it.
    worker.unref();
    port.unref();
  }

  /** Calls `onEnd` once the thread ends (at once if it has). */
  watch(onEnd: (why: ThreadEnded) => void): void {
    this.onEnd = onEnd;
    if (this.ended) queueMicrotask(() => onEnd(this.ended!));
  }

  private end(why: ThreadEnded): void {
    this.ended ??= why;
    this.onEnd?.(this.ended);
  }
}

/** The thread of `spec`, or undefined when its script is not built or it cannot start: the caller then works in this thread. */
export function startThread<D>(spec: ThreadSpec<D>): Thread | undefined {
  const file = builtFile(spec.script);
  if (!file) return undefined;
  const { port1, port2 } = new MessageChannel();
  try {
    const data: ThreadData<D> = { port: port2, data: spec.data };
    const worker = new Worker(file, { workerData: data, transferList: [port2], resourceLimits: spec.limits });
    threadsStarted++;
    return new Thread(worker, port1, spec.name);
  } catch {
    // A thread that cannot start (resource limits): the same work in this thread.
    port1.close();
    return undefined;
  }
}

/**
 * The lane of `spec`: in a thread if its script is built and the thread starts, else in this
 * thread with `here`'s handler. The one place that decides.
 */
export async function openLane<D, Req, Ans, NoteIn = never, NoteOut = never>(spec: ThreadSpec<D>, here: () => Handler<Req, Ans> | Promise<Handler<Req, Ans>>, options: LaneOptions = {}): Promise<Lane<Req, Ans, NoteIn, NoteOut>> {
  if (!options.mainThread) {
    if (options.thread || (options.lazy && builtFile(spec.script))) return threadLane(options.thread ?? (() => startThread(spec)), spec.name);
    const thread = startThread(spec);
    if (thread) return threadLane(thread, spec.name);
  }
  return mainThreadLane(await here(), spec.name);
}

/** The lane's work done in this thread, answered at once, in order. */
export function mainThreadLane<Req, Ans, NoteIn = never, NoteOut = never>(handle: Handler<Req, Ans>, name: string): Lane<Req, Ans, NoteIn, NoteOut> {
  let closed: ThreadEnded | undefined;
  const lane: Lane<Req, Ans, NoteIn, NoteOut> = {
    thread: 'main',
    send(request) {
      if (closed) return caught(Promise.reject(closed));
      const answer = handle(request);
      lane.onAnswer?.(answer);
      return Promise.resolve(answer);
    },
    tell() {},
    pull() {},
    start() {},
    waitBelow: () => Promise.resolve(),
    inFlight: 0,
    stop() {},
    close: async () => void (closed = new ThreadEnded(`${name} was closed`, true)),
  };
  return lane;
}

/** A request's promise, marked as handled: a caller that only listens to onAnswer leaves no unhandled rejection. */
function caught<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}

interface Slot<Ans> {
  resolve: (answer: Ans) => void;
  reject: (why: ThreadEnded) => void;
}

/** The lane over a thread (or what starts it, on the first message). */
export function threadLane<Req, Ans, NoteIn = never, NoteOut = never>(source: Thread | (() => Thread | undefined), name: string): Lane<Req, Ans, NoteIn, NoteOut> {
  return new ThreadLane<Req, Ans, NoteIn, NoteOut>(source, name);
}

/**
 * Its port and thread keep the process alive only while a request is unanswered; waiting is
 * a promise settled by the port's messages or the thread's end, never a blocking wait.
 */
class ThreadLane<Req, Ans, NoteIn, NoteOut> implements Lane<Req, Ans, NoteIn, NoteOut> {
  readonly thread = 'worker';
  onAnswer?: (answer: Ans) => void;
  onNote?: (note: NoteIn) => unknown;
  onStart?: () => void;
  private running?: Thread;
  private readonly slots: Slot<Ans>[] = [];
  private readonly waiters: { below: number; resolve: () => void; reject: (why: ThreadEnded) => void }[] = [];
  private ended?: ThreadEnded;
  /** Requests the thread never answered: unanswered for ever, once it ended. */
  private lost = 0;

  constructor(
    private readonly source: Thread | (() => Thread | undefined),
    private readonly name: string,
  ) {}

  get inFlight(): number {
    return this.slots.length + this.lost;
  }

  send(request: Req, transfer: ArrayBuffer[] = []): Promise<Ans> {
    const thread = this.connect();
    if (this.ended || !thread) return caught(Promise.reject(this.ended));
    const answered = new Promise<Ans>((resolve, reject) => this.slots.push({ resolve, reject }));
    this.alive(true);
    thread.port.postMessage({ request } satisfies ToThread<Req, NoteOut>, transfer);
    return caught(answered);
  }

  tell(note: NoteOut): void {
    const thread = this.connect();
    if (!this.ended) thread?.port.postMessage({ note } satisfies ToThread<Req, NoteOut>);
  }

  pull(): void {
    const port = this.running?.port;
    if (!port) return;
    for (let m = receiveMessageOnPort(port); m; m = receiveMessageOnPort(port)) this.receive(m.message as FromThread<Ans, NoteIn>);
  }

  waitBelow(n: number): Promise<void> {
    this.connect();
    this.pull();
    if (this.inFlight <= n) return Promise.resolve();
    if (this.ended) return Promise.reject(this.ended);
    return new Promise((resolve, reject) => this.waiters.push({ below: n, resolve, reject }));
  }

  stop(graceMs: number): void {
    // What the thread answers within the grace still reaches the caller.
    if (!this.ended) setTimeout(() => this.end(new ThreadEnded('the run was stopped', true)), graceMs).unref();
  }

  async close(): Promise<void> {
    // A thread started early and never taken up ends here too.
    const worker = this.running?.worker ?? (typeof this.source === 'function' ? undefined : this.source.worker);
    this.end(new ThreadEnded(`${this.name} was closed`, true));
    await worker?.terminate();
  }

  start(): void {
    this.connect();
  }

  /** The thread, taken up on first use: its port heard, its end watched. */
  private connect(): Thread | undefined {
    if (this.running || this.ended) return this.running;
    const thread = typeof this.source === 'function' ? this.source() : this.source;
    if (!thread) {
      this.end(new ThreadEnded(`${this.name} could not start`, false));
      return undefined;
    }
    this.running = thread;
    thread.port.on('message', (message: FromThread<Ans, NoteIn>) => {
      this.receive(message);
      this.settle();
    });
    thread.port.unref();
    thread.watch((why) => this.end(why));
    this.onStart?.();
    return thread;
  }

  private receive(message: FromThread<Ans, NoteIn>): void {
    if ('note' in message) return this.hear(message);
    const slot = this.slots.shift();
    this.onAnswer?.(message.answer);
    slot?.resolve(message.answer);
  }

  /** A note; one of the thread's window is acknowledged once the caller has dealt with it (a failure is the caller's to tell). */
  private hear({ note, ack }: { note: NoteIn; ack?: true }): void {
    const heard = this.onNote?.(note);
    if (ack) void Promise.resolve(heard).then(() => this.running?.port.postMessage({ ack: true } satisfies ToThread<Req, NoteOut>), () => undefined);
  }

  /** Settles the waits that can be; with nothing unanswered, nothing of the thread keeps sgq alive. */
  private settle(): void {
    for (const waiter of [...this.waiters]) {
      if (!this.ended && this.inFlight > waiter.below) continue;
      this.waiters.splice(this.waiters.indexOf(waiter), 1);
      if (this.inFlight > waiter.below) waiter.reject(this.ended!);
      else waiter.resolve();
    }
    if (this.slots.length === 0) this.alive(false);
  }

  private end(why: ThreadEnded): void {
    if (this.ended) return;
    // What the thread answered before it ended is the caller's first.
    this.pull();
    this.ended = why;
    this.lost = this.slots.length;
    for (const slot of this.slots.splice(0)) slot.reject(why);
    void this.running?.worker.terminate();
    this.running?.port.close();
    this.settle();
  }

  private alive(on: boolean): void {
    for (const handle of this.running ? [this.running.port, this.running.worker] : []) {
      if (on) handle.ref();
      else handle.unref();
    }
  }
}
