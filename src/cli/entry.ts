import { VERSION } from '../core/version.js';
import { cacheDir } from './cache-dir.js';
import { installCodeCache } from './code-cache.js';
import { prerenderedHelp } from './prerendered-help.js';
import { onStderrCreated } from './stderr-on-use.js';
import { asksForLeftOut, hasFlag } from './route-left-out.js';
import { NAMESPACES, ROUTES } from '../core/routes.js';

/**
 * The process entry: wires signals and the real streams to `main`. SIGINT and SIGTERM abort
 * the run (which stops requests, finishes the line being written and prints the summary);
 * a second signal ends the process at once.
 */
export async function run(): Promise<number> {
  const argv = process.argv.slice(2);
  // A closed stdout (`sgq … | head`) is handled by the run; a closed stderr (`2>&1 | head`)
  // leaves nobody to tell. Neither may surface as a crash with a trace. stderr gets its
  // handler when it is first used: a run with nothing to say never makes it.
  process.stdout.on('error', () => undefined);
  onStderrCreated((stderr) => stderr.on('error', () => undefined));
  // `sgq --version` is run by scripts and installers; answer it without loading the CLI.
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  // Bundled, this file is dist/cli.cjs and the rest of sgq lies beside it.
  const distDir = typeof __dirname === 'string' ? __dirname : undefined;
  const help = distDir === undefined || process.stdout.isTTY ? undefined : prerenderedHelp(distDir, argv);
  if (help !== undefined) {
    process.stdout.write(help);
    return 0;
  }
  // jq's thread boots beside the rest of sgq's start (40-70 ms next to a busy main thread),
  // so that it is ready when the first page is (src/cli/jq/jq-thread-early.ts).
  // It sets V8's flags for jq first, which the code cache is checked against: such runs keep
  // code caches of their own, or they and the runs without would refuse each other's.
  const kind = codeKind(argv);
  let cacheKind: string = kind;
  if (distDir !== undefined && hasFlag(argv, '--jq')) {
    const early = await import('./jq/jq-thread-early.js');
    if (early.needsJqThread(argv)) {
      early.startJqThreadEarly(`${distDir}/jq-worker.cjs`);
      cacheKind += '-jq';
    }
  }
  const codeCache = distDir === undefined ? undefined : installCodeCache(distDir, cacheDir(process.env), cacheKind, process.env);
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
  const hooks = { onV8FlagsChange: () => codeCache?.flagsChanged() };
  // A route command starts with the smaller bundle (with all its parts where a flag asks for
  // one left out of the smallest: src/cli/route-left-out.ts); a line it leaves to Commander,
  // with the whole program.
  if (kind === 'route') {
    const { mainRoute, processIo } = asksForLeftOut(argv) ? await import('./route-full.js') : await import('./route-main.js');
    const code = await mainRoute(argv, processIo(controller.signal, hooks));
    if (code !== undefined) return code;
  }
  const { main, processIo } = await import('./main.js');
  return main(argv, processIo(controller.signal, hooks));
}

/**
 * Which code cache serves a run: help, a route command (what scripts and loops run), or any
 * other command. Each compiles different parts of sgq, and a cache holds what its run compiled.
 */
function codeKind(argv: readonly string[]): 'help' | 'route' | 'other' {
  if (argv.length === 0 || argv[0] === 'help' || argv.includes('--help') || argv.includes('-h')) return 'help';
  const word = argv.find((arg) => !arg.startsWith('-'));
  const isRoute = (NAMESPACES as readonly string[]).includes(word ?? '') || ROUTES.some((r) => !r.namespace && r.verb === word);
  return isRoute ? 'route' : 'other';
}
