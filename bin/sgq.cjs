#!/usr/bin/env node
'use strict';
// Thin launcher: the bundled program lives in dist/ (built by `npm run build`, run by `prepare`).
// It is CommonJS so that a start-up never pays for the ES module loader (see scripts/build.mjs).

// Compiled code is cached between runs by dist/cli.cjs itself (src/cli/code-cache.ts), on every
// Node line; Node's own module.enableCompileCache() is left off, so there is one cache, not two.

let cli;
try {
  cli = require('../dist/cli.cjs');
} catch (error) {
  if (error.code !== 'MODULE_NOT_FOUND') throw error;
  // A clone where `npm ci` has not run yet: say so instead of printing a stack trace.
  process.stderr.write('sgq: the built program (dist/) is missing; run `npm ci` or `npm run build` in the sgq folder\n');
  process.exit(1);
}
// If the event loop ever empties with the run still pending (a bug: something waiting on an
// event that will not come), Node exits 0, and that must not look like success to cron. The
// code is set at exit, not before the run: Commander reads process.exitCode to choose the exit
// code of its help, so a failure code set early made `sgq help graph` exit 2.
let settled = false;
process.on('exit', (code) => {
  if (settled || code !== 0) return;
  process.exitCode = 1;
  process.stderr.write('sgq: internal error: the run stopped before it finished; this is a bug in sgq, please report it\n');
});
cli.run().then((code) => {
  settled = true;
  process.exitCode = code;
  // Once the event loop has nothing left (the moment Node would exit by itself: every write
  // flushed, every handle closed or unref'd), exit from there: the 'exit' handlers run and the
  // code is the same, but Node's teardown of the environment and the heap (about 1 ms of a
  // one-page run) is left to the operating system. Only while nobody else listens, since
  // another 'beforeExit' listener may have scheduled more work.
  process.once('beforeExit', () => {
    if (process.listenerCount('beforeExit') === 0) process.exit();
  });
});
