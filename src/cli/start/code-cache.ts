import { closeSync, fstatSync, openSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { Script } from 'node:vm';
import { replaceFile } from '../../fs/atomic.js';
import { makePrivateFolder } from '../../fs/modes.js';
import { readRegularFileInto, readUpTo } from '../../fs/read.js';
import { removeFilesOlderThan } from '../../fs/sweep.js';
import { shortHash } from '../../fs/temp-names.js';
import { ROUTE_WORDS } from '../../core/route-words.js';
import { cacheDir } from '../run/cache-dir.js';

// How bin/sgq.cjs loads the CLI (dist/cli.cjs) with its compiled code kept between runs, in
// sgq's cache folder, in code/ (made 0700: it is code Node runs).
//
// On Node 22.1 and later, Node's own module.enableCompileCache() keeps it. Node 20 has none,
// and there a one-page command spent about a quarter of its CPU parsing and compiling sgq
// again. There the bundle is compiled here, through public APIs only: wrapped as Node wraps a
// CommonJS module and compiled by vm.Script with the cached data of an earlier run; at exit, a
// run that compiled it without usable data keeps V8's cache of it, taken then, so that it holds
// every function the run compiled (Node's own holds those of the load only).
//   - one entry for each kind of run (help, a route command, any other command): each
//     compiles other parts of sgq, and V8 deserializes all of an entry at once;
//   - an entry's first line names the bundle's size, times and inode (a rebuild or an install
//     changes them) and a checksum of the data: V8 checks the source's length, its own
//     version and its flags, not the data, and runs damaged data as it is;
//   - memory a run touches for the first time is dear (20-30 us a page in the machines sgq is
//     measured on, fault and first read; docs/performance.md, 5.3.6): the data starts on an
//     8-byte boundary of the file (the first line is padded), where V8 takes it in place (it
//     copies data that does not lie on a pointer's boundary); the bundle is read once, wrapped,
//     into one buffer (wrapping the file's text made a second string, which V8 copied into a
//     third); and the entry is read into that buffer again once the bundle's string is made;
//   - a run whose V8 flags changed (--jq sets jq's) writes nothing: V8 refuses data taken
//     under other flags, so such runs and the others would keep replacing each other's;
//   - the names hold a hash of the dist folder and Node's options: two installs, or runs with
//     and without NODE_OPTIONS, do not replace each other's entries;
//   - a run that writes removes the entries nobody wrote for 30 days (other copies of sgq);
//   - whatever fails (no home, a read-only disk, a damaged entry) means compiling as usual.
// NODE_DISABLE_COMPILE_CACHE=1 turns either cache off; with NODE_COMPILE_CACHE, Node keeps its
// own wherever that says, and sgq keeps none.

// 3: the data lies on an 8-byte boundary (the entries of 2 did not, and would be kept as they were).
const FORMAT = 'sgq-code-cache 3';
const MAX_AGE_MS = 30 * 24 * 3600 * 1000;
// One word in 64 (every 256 bytes): two in each 512-byte sector.
const STRIDE = 64;
// What Node wraps a CommonJS module in, on one line: the file's line numbers stay its own.
const WRAP = ['(function (exports, require, module, __filename, __dirname) { ', '\n});'] as const;
// Where V8 takes cached data without copying it: a pointer's boundary.
const ALIGN = 8;

type Env = Record<string, string | undefined>;
type Wrapper = (this: unknown, exports: unknown, require: unknown, module: unknown, filename: string, dirname: string) => void;

/** The CLI's exports (dist/cli.cjs), loaded with a code cache where one can be kept. */
export function loadCli(distDir: string, argv: readonly string[], outer: NodeJS.Require, env: Env = process.env): unknown {
  // NODE_COMPILE_CACHE: the user's own choice of Node's cache (which Node 20 ignores), no sgq's.
  const folder = env.NODE_DISABLE_COMPILE_CACHE || env.NODE_COMPILE_CACHE ? undefined : codeFolder(env);
  if (folder === undefined) return outer(join(distDir, 'cli.cjs'));
  const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
  if (major > 22 || (major === 22 && minor >= 1)) {
    enableNodeCache(folder);
    return outer(join(distDir, 'cli.cjs'));
  }
  return loadCached(join(distDir, 'cli.cjs'), join(folder, `${process.version}-${process.arch}`), runKind(argv), outer, env);
}

/**
 * sgq's global options whose value is the next word (src/cli/program/global-options.ts; a test
 * keeps the two in step): in `sgq --profile work graph followers jack`, `work` is not the command.
 */
export const GLOBAL_OPTIONS_WITH_VALUES: readonly string[] = ['--profile', '--base-url', '--timeout', '--retries'];

/** Which entry serves a run: each kind compiles other parts of sgq. */
export function runKind(argv: readonly string[]): 'help' | 'route' | 'other' {
  if (argv.length === 0 || argv[0] === 'help' || argv.includes('--help') || argv.includes('-h')) return 'help';
  return ROUTE_WORDS.includes(commandWord(argv)) ? 'route' : 'other';
}

/** The line's first word that is neither an option nor a global option's value ('' if none). */
function commandWord(argv: readonly string[]): string {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('-')) return arg;
    if (GLOBAL_OPTIONS_WITH_VALUES.includes(arg)) i++;
  }
  return '';
}

/** $XDG_CACHE_HOME/sgq/code, else ~/.cache/sgq/code (src/cli/run/cache-dir.ts). */
function codeFolder(env: Env): string | undefined {
  const dir = cacheDir(env);
  return dir === undefined ? undefined : join(dir, 'code');
}

function enableNodeCache(folder: string): void {
  try {
    makePrivateFolder(folder);
    // Typed by hand: sgq's @types/node is Node 20's, which has no compile cache.
    const { enableCompileCache } = process.getBuiltinModule('node:module') as unknown as { enableCompileCache(dir: string): unknown };
    // Node makes its folder in it now and writes its files as the process exits, each by the
    // umask (0755 and 0644 under 022): sgq's folders and files are its owner's alone.
    const umask = process.umask(0o077);
    try {
      enableCompileCache(folder);
    } finally {
      process.umask(umask);
    }
    process.once('exit', () => process.umask(0o077));
  } catch {
    // No home folder, a read-only disk: no cache.
  }
}

/** Node 20's load of `filename`, compiled with the entry for `kind` in `folder`. */
function loadCached(filename: string, folder: string, kind: string, outer: NodeJS.Require, env: Env): unknown {
  // A module already loaded by require (a test's stand-in) is not loaded again.
  const known = outer.cache[filename];
  if (known !== undefined) return known.exports;
  const name = shortHash([filename, ...process.execArgv, env.NODE_OPTIONS ?? ''].join('\0'));
  const entry = join(folder, `${name}-${kind}-${basename(filename)}.v8`);
  const { header, source, spare } = wrappedSource(filename, sizeOf(entry));
  const cachedData = readEntry(entry, header, spare);
  const script = new Script(source, { filename, cachedData });
  if (cachedData === undefined || script.cachedDataRejected === true) {
    // node:v8 only here, on a run that will write: loading it cost every start some 3 ms.
    const { cachedDataVersionTag } = process.getBuiltinModule('node:v8');
    const flags = cachedDataVersionTag();
    process.once('exit', () => {
      if (cachedDataVersionTag() === flags) saveEntry(folder, entry, header, script);
    });
  }
  const module = { exports: {} };
  const dir = dirname(filename);
  // The bundle requires Node's modules and its vendor files (./vendor/*.cjs).
  const require = (id: string): unknown => outer(id.startsWith('.') ? join(dir, id) : id);
  (script.runInThisContext() as Wrapper).call(module.exports, module.exports, require, module, filename, dir);
  return module.exports;
}

/**
 * The bundle's text as Node wraps it, read into one buffer between the wrapper's two parts, and
 * what identifies this copy of it (its size, times and inode, from the file read). latin1: the
 * bundle is ASCII (esbuild escapes the rest, scripts/build.mjs), and latin1 makes the string
 * without decoding UTF-8. The buffer, of at least `spareSize` bytes, is free again once the
 * string is made: the entry is read into it.
 */
function wrappedSource(filename: string, spareSize: number): { header: string; source: string; spare: Buffer } {
  const fd = openSync(filename, 'r');
  try {
    const s = fstatSync(fd);
    const textEnd = WRAP[0].length + s.size;
    const bytes = Buffer.allocUnsafeSlow(Math.max(textEnd + WRAP[1].length, spareSize));
    let at = readUpTo(fd, bytes, bytes.write(WRAP[0], 'latin1'), textEnd);
    at += bytes.write(WRAP[1], at, 'latin1');
    return { header: `${FORMAT} ${s.size} ${s.mtimeMs} ${s.ctimeMs} ${s.ino}`, source: bytes.toString('latin1', 0, at), spare: bytes };
  } finally {
    closeSync(fd);
  }
}

/** The size of a file, 0 when there is none or it cannot be known (a file where the folder should be, no permission). */
function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** At exit: V8's cache of `script`, behind its first line. */
function saveEntry(folder: string, entry: string, header: string, script: Script): void {
  try {
    makePrivateFolder(folder);
    replaceFile(entry, entryBytes(header, script.createCachedData()));
    removeFilesOlderThan(folder, Date.now() - MAX_AGE_MS);
  } catch {
    // Runs at exit: nothing here may throw, or change the exit code.
  }
}

/** An entry: its first line (the header and the data's checksum, padded so that the data starts on an 8-byte boundary), then the data. */
export function entryBytes(header: string, data: Uint8Array): Buffer {
  const line = `${header} ${checksum(data)}`;
  const padding = (ALIGN - ((line.length + 1) % ALIGN)) % ALIGN;
  return Buffer.concat([Buffer.from(`${line}${' '.repeat(padding)}\n`, 'latin1'), data]);
}

/** The data of `entry` if its first line names this copy of the file and the data's checksum (read into `spare` if it fits). */
export function readEntry(entry: string, header: string, spare: Buffer = Buffer.alloc(0)): Buffer | undefined {
  try {
    // Not a plain read: one of a FIFO put there would wait for a writer, before any of sgq runs.
    const bytes = readRegularFileInto(entry, spare);
    const end = bytes.indexOf(10);
    const data = bytes.subarray(end + 1);
    return end !== -1 && bytes.toString('latin1', 0, end).trimEnd() === `${header} ${checksum(data)}` ? data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * FNV-1a over one 32-bit word in 64 of the data (two in every 512-byte sector), its length and
 * its last bytes: a damaged block (a disk's sector, a truncation, a file of something else)
 * changes it. One word in 8 cost a one-page run on Node 20 about 10M instructions of some 790M
 * (a loop of 17,000 turns, interpreted then compiled by TurboFan on the spot), one in 64 a
 * tenth of that; node:crypto and node:zlib would cost more to load.
 */
export function checksum(data: Uint8Array): string {
  // Words are read where they lie when they lie on a 4-byte boundary, else from a copy.
  if (data.byteOffset % 4 !== 0) data = new Uint8Array(data);
  const words = new Int32Array(data.buffer, data.byteOffset, data.byteLength >> 2);
  let hash = Math.imul(0x811c9dc5 ^ data.length, 0x01000193);
  for (let i = 0; i < words.length; i += STRIDE) hash = Math.imul(hash ^ words[i]!, 0x01000193);
  for (let i = Math.max(0, data.length - 64); i < data.length; i++) hash = Math.imul(hash ^ data[i]!, 0x01000193);
  return (hash >>> 0).toString(16);
}
