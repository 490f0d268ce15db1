import type { Io } from './io.js';
import { routeLine } from './route-main.js';

export { processIo } from './io.js';

// The route bundle with everything a route command may load (dist/route-full.cjs): for a line
// with a flag whose part dist/route-main.cjs leaves out (src/cli/route-left-out.ts).

/** A route command line run, or undefined where the whole program must run it. */
export function mainRoute(argv: readonly string[], io: Io): Promise<number | undefined> {
  return routeLine(argv, io);
}
