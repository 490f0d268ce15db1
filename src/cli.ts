import { processIo } from './io.js';
import { main } from './main.js';

/**
 * The process entry: wires signals and the real streams to `main`. SIGINT and SIGTERM abort
 * the run (which stops requests, finishes the line being written and prints the summary);
 * a second signal ends the process at once.
 */
export async function run(): Promise<number> {
  const controller = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    if (controller.signal.aborted) process.exit(signal === 'SIGINT' ? 130 : 143);
    controller.abort(signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // A closed stdout (`sgq … | head`) is handled by the run; never let it surface as a trace.
  process.stdout.on('error', () => undefined);
  return main(process.argv.slice(2), processIo(controller.signal));
}
