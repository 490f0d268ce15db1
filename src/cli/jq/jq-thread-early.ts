import { setFlagsFromString } from 'node:v8';
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import { hasFlag } from '../route-left-out.js';
import { compileSubset } from './subset/jq-subset.js';
import { JQ_V8_FLAGS } from './jq-v8-flags.js';

// jq's thread, started as soon as the command line shows --jq (src/cli/entry.ts), before the
// rest of sgq loads. Beside a busy main thread a thread took 40-70 ms to boot, and in half the
// runs the first page waited for it (up to 45 ms: the filter's check ends sooner). The lane
// (jq-lane.ts) adopts it and sends it the filter. A filter sgq answers itself (jq-subset.ts)
// starts none: its thread would boot for nothing (10 MiB of peak RSS). The entry and the bundle that adopts it are separate module graphs, so the
// thread waits on the process object.

const KEY = Symbol.for('sgq.jq-thread');
const holder = process as unknown as Record<symbol, EarlyThread | undefined>;

export interface EarlyThread {
  worker: Worker;
  /** The lane's side of the thread's port. */
  port: MessagePort;
  /** Why the thread ended before the lane watched it, if it did. */
  ended?: string;
}

/** The thread's resources: a small young generation, since its garbage is jq's output, a batch at a time. */
export const JQ_THREAD_LIMITS = { maxYoungGenerationSizeMb: 4 };

/**
 * Whether the line's --jq filter is one jq runs (so its thread will be needed): not one of
 * sgq's subset, or with --slurp or --argjson. Read from the words as they are; a line Commander
 * reads otherwise only starts a thread for nothing, or leaves the lane to start it.
 */
export function needsJqThread(argv: readonly string[]): boolean {
  let filter: string | undefined;
  argv.forEach((word, i) => {
    if (word === '--jq') filter = argv[i + 1];
    else if (word.startsWith('--jq=')) filter = word.slice('--jq='.length);
  });
  if (filter === undefined) return false;
  return argv.includes('--slurp') || hasFlag(argv, '--argjson') || compileSubset(filter) === undefined;
}

/** What a thread's 'error' and 'exit' say, wherever it was started (jq-lane.ts watches its own the same way). */
export const threadFailed = (error: Error): string => `jq's thread failed: ${error.message}`;
export const threadEnded = (code: number): string => `jq's thread ended (exit code ${code}) before it answered`;

export function startJqThreadEarly(file: string): void {
  // Before anything of sgq's bundles loads: see JQ_V8_FLAGS.
  setFlagsFromString(JQ_V8_FLAGS);
  const { port1, port2 } = new MessageChannel();
  const worker = new Worker(file, { workerData: { port: port2 }, transferList: [port2], resourceLimits: JQ_THREAD_LIMITS });
  const thread: EarlyThread = { worker, port: port1 };
  // Until the lane watches it, an end is noted (an 'error' nobody listens to would throw here).
  worker.on('error', (error) => (thread.ended ??= threadFailed(error)));
  worker.on('exit', (code) => (thread.ended ??= threadEnded(code)));
  // Nothing of it keeps sgq alive until the lane waits on it.
  worker.unref();
  port1.unref();
  holder[KEY] = thread;
}

/** The thread started early, if any, now the caller's: taken once. */
export function takeEarlyThread(): EarlyThread | undefined {
  const thread = holder[KEY];
  holder[KEY] = undefined;
  return thread;
}
