#!/usr/bin/env node
'use strict';
// Thin launcher: the bundled program lives in dist/ (built by `npm run build`, run by `prepare`).
// It is CommonJS so that a start-up never pays for the ES module loader (see scripts/build.mjs).

// `sgq --version` is run by scripts and installers: answered before the CLI loads, from the
// package's manifest, as the bundle's own --version reads it (src/core/version.ts).
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  process.stdout.on('error', () => undefined);
  process.stdout.write(`${require('../package.json').version}\n`);
  return;
}

// Node keeps the code it compiles for the bundle between runs (Node 22.1 and later), in sgq's
// cache folder (src/cli/cache-dir.ts: $XDG_CACHE_HOME/sgq, else ~/.cache/sgq), in code/, made
// 0700 here: a compile cache is code Node runs, so no other user may write it (Node's default,
// a folder in /tmp, is shared). NODE_DISABLE_COMPILE_CACHE=1 turns it off; NODE_COMPILE_CACHE
// puts Node's own wherever it says. A cache that cannot be kept means compiling as usual.
// node:module is loaded only on those lines (on Node 20 it would cost a start for nothing).
const [major, minor] = process.versions.node.split('.').map(Number);
if ((major > 22 || (major === 22 && minor >= 1)) && !process.env.NODE_DISABLE_COMPILE_CACHE && !process.env.NODE_COMPILE_CACHE) {
  try {
    const { enableCompileCache } = require('node:module');
    const { join } = require('node:path');
    const home = process.env.HOME || require('node:os').homedir();
    const dir = join(process.env.XDG_CACHE_HOME || join(home, '.cache'), 'sgq', 'code');
    require('node:fs').mkdirSync(dir, { recursive: true, mode: 0o700 });
    enableCompileCache(dir);
  } catch {
    // No home folder, a read-only disk: no cache.
  }
}

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
