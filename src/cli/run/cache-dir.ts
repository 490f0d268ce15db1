import { join } from 'node:path';

/**
 * sgq's cache folder: $XDG_CACHE_HOME/sgq, else ~/.cache/sgq; undefined when there is no home
 * folder and no XDG_CACHE_HOME. It holds the answers kept by `--cache` and, in `code/`, Node's
 * compile cache of sgq's code (src/cli/start/code-cache.ts), kept before the CLI loads (both safe to delete).
 */
export function cacheDir(env: Record<string, string | undefined>): string | undefined {
  if (env.XDG_CACHE_HOME) return join(env.XDG_CACHE_HOME, 'sgq');
  let home = env.HOME;
  try {
    // node:os only when HOME is not set.
    home ||= process.getBuiltinModule('node:os').homedir();
  } catch {
    return undefined;
  }
  return home ? join(home, '.cache', 'sgq') : undefined;
}
