import { setFlagsFromString } from 'node:v8';
import { builtFile, startThread, type Thread } from '../../threads/lane.js';
import { compileSubset } from './subset/jq-subset.js';
import { JQ_V8_FLAGS } from './jq-v8-flags.js';

/** Where the entry finds jq's thread script (the entry loads nothing of the lane before a --jq line). */
export { builtFile };

// jq's thread, started as soon as the command line shows --jq (src/cli/start/entry.ts), before the
// rest of sgq loads. Beside a busy main thread a thread took 40-70 ms to boot, and in half the
// runs the first page waited for it (up to 45 ms: the filter's check ends sooner). The lane
// (jq-lane.ts) adopts it and sends it the filter. A filter sgq answers itself (jq-subset.ts)
// starts none: its thread would boot for nothing (10 MiB of peak RSS). The entry and the bundle that adopts it are separate module graphs, so the
// thread waits on the process object.

const KEY = Symbol.for('sgq.jq-thread');
const holder = process as unknown as Record<symbol, Thread | undefined>;

/** jq's thread as the lane (src/threads/lane.ts) starts it: its name in a failure's line, and its resources (a small young generation, since its garbage is jq's output, a batch at a time). */
export const JQ_THREAD = { name: "jq's thread", limits: { maxYoungGenerationSizeMb: 4 } };

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
  return argv.includes('--slurp') || argv.some((word) => word === '--argjson' || word.startsWith('--argjson=')) || compileSubset(filter) === undefined;
}

export function startJqThreadEarly(file: string): void {
  // Before anything of sgq's bundles loads: see JQ_V8_FLAGS.
  setFlagsFromString(JQ_V8_FLAGS);
  // Its filter comes later, in a note (the lane tells it as it takes the thread up).
  holder[KEY] = startThread({ ...JQ_THREAD, script: file, data: undefined });
}

/** The thread started early, if any, now the caller's: taken once. */
export function takeEarlyThread(): Thread | undefined {
  const thread = holder[KEY];
  holder[KEY] = undefined;
  return thread;
}
