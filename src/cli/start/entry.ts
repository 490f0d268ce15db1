import { onStderrCreated } from './stderr-on-use.js';

// The process entry, bundled with the rest of the CLI into dist/cli.cjs: every command is
// parsed by Commander (src/cli/start/main.ts), and each loads its runner, and the runner the large
// dependencies it needs (dist/vendor/*.cjs), on first use. bin/sgq.cjs loads this bundle with
// its code cache (src/cli/start/code-cache.ts), and answers `sgq --version` and help into a pipe
// without it.

/**
 * Wires signals and the real streams to `main`. SIGINT and SIGTERM abort the run (which stops
 * requests, finishes the line being written and prints the summary); a second signal ends the
 * process at once.
 */
export async function run(): Promise<number> {
  const argv = process.argv.slice(2);
  // A closed stdout (`sgq … | head`) is handled by the run; a closed stderr (`2>&1 | head`)
  // leaves nobody to tell. Neither may surface as a crash with a trace. stderr gets its
  // handler when it is first used: a run with nothing to say never makes it.
  process.stdout.on('error', () => undefined);
  onStderrCreated((stderr) => stderr.on('error', () => undefined));
  const controller = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    if (controller.signal.aborted) {
      process.stderr.write(`sgq: ${signal} again: quitting at once\n`);
      process.exit(signal === 'SIGINT' ? 130 : 143);
    }
    controller.abort(signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // jq's thread boots beside the rest of sgq's start (40-70 ms next to a busy main thread), so
  // that it is ready when the first page is (src/cli/jq/jq-thread-early.ts).
  if (argv.some((word) => word === '--jq' || word.startsWith('--jq='))) {
    const early = await import('../jq/jq-thread-early.js');
    const jqWorker = early.builtFile('jq-worker.cjs');
    if (jqWorker !== undefined && early.needsJqThread(argv)) early.startJqThreadEarly(jqWorker);
  }
  const { main, processIo } = await import('./main.js');
  return main(argv, processIo(controller.signal));
}

/** The CLI's main(), for the build, which renders each command's help with it (scripts/build.mjs). */
export const loadMain = () => import('./main.js');
