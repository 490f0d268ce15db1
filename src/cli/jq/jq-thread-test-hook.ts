// A test hook of jq's thread, not a setting (docs/development.md lists the hooks): with
// SGQ_TEST_JQ_THREAD=KIND@N the thread, as its Nth batch comes, never answers it: `exit` ends
// the thread (exit code 9), `throw` throws past jq's own failure handling, `oom` fills its heap
// until V8 ends it, `spin` loops for ever. The tests show that each fails the run with one line,
// or is ended by a signal, instead of leaving sgq waiting. Read once; unset, it costs nothing.

const HOOK = /^(exit|throw|oom|spin)@([1-9]\d*)$/.exec(process.env.SGQ_TEST_JQ_THREAD ?? '');

let batches = 0;

/** Awaited as jq's turn comes to each batch (in order: the batches before it are answered). */
export async function beforeBatch(): Promise<void> {
  if (!HOOK || ++batches !== Number(HOOK[2])) return;
  const kind = HOOK[1];
  if (kind === 'exit') process.exit(9);
  if (kind === 'spin') for (;;);
  if (kind === 'throw') {
    // Thrown on its own turn, so no catch of the worker's sees it; the batch is never answered.
    setImmediate(() => {
      throw new Error('SGQ_TEST_JQ_THREAD: thrown as asked');
    });
    return new Promise(() => undefined);
  }
  const hog: number[][] = [];
  for (;;) hog.push(new Array<number>(100_000).fill(hog.length));
}
