import { ExitCode, configError } from '../../../core/errors.js';
import { cacheDir } from '../../run/cache-dir.js';
import { cacheInfo, clearCache } from '../../run/response-cache.js';
import type { CommandContext } from '../../program/context.js';
import { count } from '../../../core/words.js';

/** `sgq cache info|clear`: what --cache keeps, and forgetting it. */
export function runCacheCommand(ctx: CommandContext, verb: 'info' | 'clear'): number {
  const { io, globals } = ctx;
  const dir = cacheDir(io.env);
  if (dir === undefined) throw configError('there is no place for the cache: HOME is not set and the system knows no home folder for this user', 'set HOME or XDG_CACHE_HOME');
  if (verb === 'info') {
    const { entries, bytes } = cacheInfo(dir);
    io.stdout.write(`path=${dir}\nentries=${entries}\nbytes=${bytes}\n`);
  } else {
    const removed = clearCache(dir);
    if (!globals.quiet) io.stderr.write(`removed ${count(removed, 'cached answer')} from ${dir}\n`);
  }
  return ExitCode.ok;
}
