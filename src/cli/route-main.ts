import { routeCommands } from './commands/routes.js';
import { createContext, type GlobalOptions } from './context.js';
import { fastParse } from './fast-parse.js';
import { failed } from './failure.js';
import { globalOptions } from './global-options.js';
import type { Io } from './io.js';

export { processIo } from './io.js';

// The bundle a route command starts with (dist/route-main.cjs): the route commands, their
// runner and what it loads, without Commander's program, the other commands or their code,
// so a one-page run reads and runs less. A line the fast parser leaves to Commander is run by
// dist/main.cjs instead; nothing made here is handed over to it (each bundle has its own
// copy of the modules both use, so an object of one is no instance of the other's classes).

/**
 * Runs a plain route command line (src/cli/fast-parse.ts) and resolves to its exit code, or
 * to undefined, having done nothing, where the line is for the whole program to run.
 */
export async function mainRoute(argv: readonly string[], io: Io): Promise<number | undefined> {
  const fast = fastParse(argv, routeCommands(), globalOptions());
  if (fast === undefined) return undefined;
  try {
    return await fast.definition.handler!(fast.args, fast.opts, createContext(io, fast.globals as GlobalOptions, noTree));
  } catch (error) {
    return failed(error, io);
  }
}

/** Only `describe` and `completion` walk the whole tree, and neither is a route command. */
function noTree(): never {
  throw new Error('the command tree is not part of the route bundle');
}
