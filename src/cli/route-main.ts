import { routeCommands } from './commands/routes.js';
import type { Io } from './io.js';
import { runPlainLine } from './plain-line.js';
import { needsLeftOut } from './route-left-out.js';

export { processIo } from './io.js';

// The bundle a route command starts with (dist/route-main.cjs): the route commands, their
// runner and what it loads, without Commander's program, the other commands or their code,
// so a one-page run reads and runs less. A line the fast parser leaves to Commander is run by
// dist/main.cjs instead; nothing made here is handed over to it (each bundle has its own
// copy of the modules both use, so an object of one is no instance of the other's classes).
// What only a flag asks for is left out of this bundle too (src/cli/route-left-out.ts): such a
// line is sent to dist/route-full.cjs (src/cli/route-full.ts), or, should one get here, to main.cjs.

/** A plain route command line run (src/cli/plain-line.ts), or undefined where the whole program must run it. */
export function mainRoute(argv: readonly string[], io: Io): Promise<number | undefined> {
  return routeLine(argv, io, (values) => !needsLeftOut(values));
}

/** A route command line run, if it parses and `accepts` its values (a command's options with the global ones). */
export function routeLine(argv: readonly string[], io: Io, accepts?: (values: Record<string, unknown>) => boolean): Promise<number | undefined> {
  return runPlainLine(argv, routeCommands(), io, noTree, accepts);
}

/** Only `describe` and `completion` walk the whole tree, and neither is a route command. */
function noTree(): never {
  throw new Error('the command tree is not part of the route bundle');
}
