// One place for the V8 flags of jq's WebAssembly, which the main thread (jq-thread-early.ts,
// jq-lane.ts) and jq's thread (jq-worker.ts) both set: a module of its own, so that the
// worker's bundle takes nothing else with it.

/**
 * V8's flags for jq's WebAssembly: one compilation task, whose malloc arena alone keeps what
 * the optimizing compiler used (V8's default, several tasks at once, held ~10 MiB more of peak
 * RSS over a 200k-record export, for ~45 ms less CPU). V8's flags are the process's, and they
 * are part of what a code cache is checked against (src/cli/start/code-cache.ts): set by jq's thread
 * while the main thread loaded sgq's bundles, they made V8 refuse the cache of every --jq run,
 * so it was compiled and written again each time. Set here before anything of sgq loads.
 */
export const JQ_V8_FLAGS = '--wasm-num-compilation-tasks=1';
