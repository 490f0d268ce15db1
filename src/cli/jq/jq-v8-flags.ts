// One place for the V8 flags of a run that starts jq's thread, which the main thread
// (jq-thread-early.ts, jq-lane.ts) and jq's thread (jq-worker.ts) both set: a module of its
// own, so that the worker's bundle takes nothing else with it.

/**
 * V8's flags for a run with jq's WebAssembly. V8's flags are the process's, and they are part
 * of what a code cache is checked against (src/cli/start/code-cache.ts): set by jq's thread
 * while the main thread loaded sgq's bundles, they made V8 refuse the cache of every --jq run,
 * so it was compiled and written again each time. Set before anything of sgq loads.
 *
 * - One compilation task: its malloc arena alone keeps what the optimizing compiler used (V8's
 *   default, several tasks at once, held ~10 MiB more of peak RSS over a 200k-record export,
 *   for ~45 ms less CPU).
 * - A young generation that stays at its first size (both threads): grown, the main thread's
 *   held 8 MiB where 2 do, and the buffers freed by a scavenge waited longer for one. With
 *   jq's output written from its batch's own buffer (jq-engine.ts's answerBatch), the export's
 *   peak RSS went from 103-110 to 94-101 MiB on Node 24, 100-102 to 92-93 on Node 22, 97 to
 *   84-89 on Node 20, for the same CPU.
 */
export const JQ_V8_FLAGS = '--wasm-num-compilation-tasks=1 --semi-space-growth-factor=1';
