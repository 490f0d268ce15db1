import { cacheDir } from './cache-dir.js';
import { installCodeCache } from './code-cache.js';
import { asksForHelp, asksForVersion } from './run-kind.js';

// dist/cli.cjs, what bin/sgq.cjs requires: the one file of sgq that Node compiles from its
// source at every start (Node 20 has no compile cache of its own, and sgq's is installed here).
// So it holds only that: it installs sgq's code cache (src/cli/code-cache.ts) and loads the
// rest of the entry (src/cli/entry.ts, dist/entry.cjs) through it. Compiled from source, the
// entry cost a one-page run some 0.5 ms more (11 KB, and the functions its run calls).

/** Runs the line of this process (src/cli/entry.ts) and resolves to its exit code. */
export async function run(): Promise<number> {
  const argv = process.argv.slice(2);
  // The entry's own cache, until the entry knows the kind of run (route, other command) the rest is.
  const kind = asksForHelp(argv) ? 'help' : asksForVersion(argv) ? 'version' : 'start';
  const codeCache = installCodeCache(__dirname, cacheDir(process.env), kind, process.env);
  // Required only now, through the cache just installed.
  const entry = await import('./entry.js');
  return entry.run(codeCache);
}
