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

// What comes before the CLI loads: dist/launch.cjs (src/cli/start/launch.ts).
// A clone where `npm ci` has not run yet, or a build cut short: say so instead of printing a stack trace.
const notBuilt = (error, file) => {
  if (!(error.code === 'MODULE_NOT_FOUND' || error.code === 'ENOENT') || !String(error.message).includes(file)) throw error;
  process.stderr.write('sgq: the built program (dist/) is missing; run `npm ci` or `npm run build` in the sgq folder\n');
  process.exit(1);
};
let launch;
try {
  launch = require('../dist/launch.cjs');
} catch (error) {
  notBuilt(error, 'launch.cjs');
}
const dist = require('node:path').dirname(require.resolve('../dist/launch.cjs'));
// `sgq … --help` into a pipe or a file: the help the build rendered (src/cli/start/prerendered-help.ts).
const help = launch.prerenderedHelp(dist, args, () => process.stdout.isTTY === true);
if (help !== undefined) {
  process.stdout.on('error', () => undefined);
  process.stdout.write(help);
  return;
}
// The CLI, dist/cli.cjs, with its compiled code kept between runs (src/cli/start/code-cache.ts).
let cli;
try {
  cli = launch.loadCli(dist, args, require);
} catch (error) {
  notBuilt(error, 'cli.cjs');
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
