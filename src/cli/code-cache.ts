import { statSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import type { Script } from 'node:vm';
import { replaceFile } from '../fs/atomic.js';
import { makePrivateFolder } from '../fs/modes.js';
import { readRegularFile } from '../fs/read.js';
import { removeFilesOlderThan } from '../fs/sweep.js';
import { shortHash } from '../fs/temp-names.js';

// A V8 code cache for sgq's own bundles (dist/main.cjs, dist/vendor/*.cjs), so that a start
// deserializes compiled code instead of parsing and compiling some 200 kB of JavaScript again:
// that was 11 ms of a 64 ms `sgq --help` on Node 20, which has no compile cache of its own.
//
// Node 22's module.enableCompileCache() stores the code compiled when a file loads, which
// leaves out every function V8 compiles lazily later (most of them: Commander's, the
// formatters'). This cache is taken when the run ends, so it holds every function the run
// needed. It is what v8-compile-cache did for yarn and eslint; that package loads node:crypto
// (6-11 ms) to name its files and keeps them in a shared /tmp, so sgq does it in this file:
//   - one file per bundle and kind of run in $XDG_CACHE_HOME/sgq/code/NODE-ARCH/ (folder made
//     0700): V8 deserializes all of a cache at once, so --help reading the functions of an
//     export would cost it 1-2 ms, and an export missing them cost it more;
//   - a file starts with a line naming the bundle's size, times and inode: an install or a
//     rebuild changes them, and a stale entry is never used (V8 itself checks only the length
//     of the source, its own version and its flags);
//   - written at exit, only when it was missing, stale or rejected, through a temporary file
//     and a rename, so a run reading it at that moment sees the old file or the new one; only
//     for bundles compiled under the V8 flags the run ends with (V8 refuses a cache taken under
//     other flags): a run that sets --liftoff-only before loading undici writes no cache of
//     main.cjs, compiled before, but does of undici, which the next such run compiles after
//     setting the same flag;
//   - named after the folder of the bundles and Node's options too, so that two installs, or
//     runs with and without NODE_OPTIONS, do not keep replacing each other's files;
//   - a run that writes also removes files not written for 30 days: those of other copies
//     of sgq (an npx folder per version, a clone), and temporary files of killed runs;
//   - anything that fails (no home, a read-only or full disk, a damaged file) means compiling
//     as usual: the cache can make sgq faster, never make it fail.
// NODE_DISABLE_COMPILE_CACHE=1 turns it off, as it does Node's own.

const FORMAT = 'sgq-code-cache 1';
const MAX_AGE_MS = 30 * 24 * 3600 * 1000;

interface CompilingModule {
  exports: unknown;
  require(id: string): unknown;
  _compile(content: string, filename: string): unknown;
}

type ModuleStatics = {
  prototype: CompilingModule;
  wrap(content: string): string;
  _resolveFilename(request: string, parent: CompilingModule, isMain: boolean, options?: unknown): string;
  _extensions: unknown;
  _cache: unknown;
};

export interface CodeCache {
  /** V8's flags changed: the bundles compiled so far get no cache (the next run would refuse it). */
  flagsChanged(): void;
}

/** Serves the bundles under `distDir` from the cache in `cacheDir`/code, in files for this `kind` of run. */
export function installCodeCache(distDir: string, cacheDir: string | undefined, kind: string, env: Record<string, string | undefined>): CodeCache | undefined {
  if (cacheDir === undefined || env.NODE_DISABLE_COMPILE_CACHE) return undefined;
  const dir = join(cacheDir, 'code', `${process.version}-${process.arch}`);
  const prefix = distDir.endsWith(sep) ? distDir : distDir + sep;
  const name = shortHash([prefix, ...process.execArgv, env.NODE_OPTIONS ?? ''].join('\0'));
  // Bumped when the run changes V8's flags; a bundle's cache is taken only under the flags it was compiled with.
  let flags = 0;
  // Loaded here, not at the top: `--version` and help into a pipe never come this far. In the
  // bundle, this file's own module object names the class: node:module itself (which compiles
  // the source-map and ES module parts of Node's loader, some 0.3 ms) is not needed.
  const ModuleClass = moduleClass();
  const { Script } = process.getBuiltinModule('node:vm');
  const compile = ModuleClass.prototype._compile;
  const toSave: { file: string; header: string; script: Script; flags: number }[] = [];

  ModuleClass.prototype._compile = function (this: CompilingModule, content: string, filename: string) {
    if (!filename.startsWith(prefix)) return compile.call(this, content, filename);
    const header = sourceHeader(filename);
    const file = join(dir, `${name}-${kind}-${filename.slice(prefix.length).replaceAll(sep, '+')}.v8`);
    const cachedData = header === undefined ? undefined : readEntry(file, header);
    const script = new Script(ModuleClass.wrap(content), { filename, cachedData });
    if (header !== undefined && (cachedData === undefined || script.cachedDataRejected === true)) toSave.push({ file, header, script, flags });
    const wrapper = script.runInThisContext({ displayErrors: true }) as (...args: unknown[]) => unknown;
    return wrapper.call(this.exports, this.exports, requireFor(this, ModuleClass), this, filename, dirname(filename));
  };

  process.once('exit', () => {
    const saving = toSave.filter((entry) => entry.flags === flags);
    for (const entry of saving) writeEntry(dir, entry.file, entry.header, entry.script);
    if (saving.length > 0) removeFilesOlderThan(dir, Date.now() - MAX_AGE_MS);
  });
  return {
    flagsChanged: () => {
      flags++;
    },
  };
}

/** The CommonJS Module class: the constructor of this bundle's `module`, else node:module's export (the same class). */
function moduleClass(): ModuleStatics {
  const own = typeof module === 'object' ? (module?.constructor as unknown as ModuleStatics | undefined) : undefined;
  return typeof own?.prototype?._compile === 'function' ? own : (process.getBuiltinModule('node:module') as unknown as ModuleStatics);
}

/** What identifies this copy of a bundle: its size, times and inode, on the cache file's first line. */
function sourceHeader(filename: string): string | undefined {
  try {
    const s = statSync(filename);
    return `${FORMAT} ${s.size} ${s.mtimeMs} ${s.ctimeMs} ${s.ino}\n`;
  } catch {
    return undefined;
  }
}

function readEntry(file: string, header: string): Buffer | undefined {
  try {
    const data = readRegularFile(file);
    const end = data.indexOf(10);
    if (end === -1 || data.toString('latin1', 0, end + 1) !== header) return undefined;
    return data.subarray(end + 1);
  } catch {
    return undefined;
  }
}

function writeEntry(dir: string, file: string, header: string, script: Script): void {
  try {
    makePrivateFolder(dir);
    // Not flushed to disk: a cache lost in a crash is compiled again.
    replaceFile(file, Buffer.concat([Buffer.from(header, 'latin1'), script.createCachedData()]), { durable: false });
  } catch {
    // Runs at exit: nothing here may throw, or change the exit code.
  }
}


/** The `require` a module gets from Node itself, bound to `module` (as v8-compile-cache builds it). */
function requireFor(module: CompilingModule, ModuleClass: ModuleStatics): NodeJS.Require {
  const require = ((id: string) => module.require(id)) as NodeJS.Require;
  require.resolve = ((request: string, options?: unknown) => ModuleClass._resolveFilename(request, module, false, options)) as NodeJS.RequireResolve;
  require.extensions = ModuleClass._extensions as NodeJS.RequireExtensions;
  require.cache = ModuleClass._cache as NodeJS.Require['cache'];
  return require;
}
