import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { cachedDataVersionTag, setFlagsFromString } from 'node:v8';
import { replaceFile } from '../../fs/atomic.js';
import { makePrivateFolder } from '../../fs/modes.js';
import { readRegularFile } from '../../fs/read.js';
import { removeFilesOlderThan } from '../../fs/sweep.js';
import { cacheDir } from '../run/cache-dir.js';

// jq's WebAssembly with the machine code V8's optimizing compiler made of it in earlier runs.
// A --jq run that jq-wasm answers spent 0.3-0.5 s of CPU of some 2.5 (200,000 records) having
// V8 optimize jq's hot functions again, every run: the gap between `--jq` and a pipe into jq.
// Node keeps no compiled WebAssembly (v8.serialize of a module does not round-trip), but V8
// has the serializer Chrome's WebAssembly cache uses, reachable from JavaScript through two
// runtime functions under --allow-natives-syntax: on Node 20, 22 and 24; Node 26's V8 has
// them no more, and there jq is compiled as before. The flag is on only for the moment of a
// call (natively, below), and V8's flags are as they were between calls.
//
// What V8 checks when it deserializes: its version, its flags and the CPU's features; not the
// data, nor that the code was made of these wire bytes (wrong code would run as it is). So an
// entry's first line names the sha256 of jq.wasm and of the data, both checked before use.
// At exit, a run whose module holds more optimized code than its entry (functions another
// filter uses) writes it again: the entry only grows, to what the filters run have needed.
// Entries live in code/ beside the JavaScript code cache (src/cli/start/code-cache.ts), named
// for Node and V8's flags (a --snapshot run sets other flags, so it keeps an entry of its own),
// swept by a write once 30 days old (one still in use is written again by its next run),
// turned off by NODE_DISABLE_COMPILE_CACHE=1.

const FORMAT = 'sgq-wasm-cache 1';
const MAX_AGE_MS = 30 * 24 * 3600 * 1000;

type Env = Record<string, string | undefined>;
interface Natives {
  serialize(module: WebAssembly.Module): ArrayBuffer;
  deserialize(data: ArrayBuffer, wire: Uint8Array): WebAssembly.Module | undefined;
}

/** jq's module, whether it came from the cache, and what keeps its code for the next run (called at exit). */
export interface CompiledJq {
  module: WebAssembly.Module;
  cached: boolean;
  keep(): void;
}

// (sgq's TypeScript library has WebAssembly's types, not its value)
const wasmApi = (globalThis as unknown as { WebAssembly: { Module: new (bytes: Uint8Array) => WebAssembly.Module } }).WebAssembly;

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** Whether this Node's V8 can serialize a WebAssembly module (Node 20, 22 and 24). */
export const canKeepJqCode = (): boolean => nativeSerializer() !== undefined;

/**
 * jq's module from its wire bytes: from the cache's entry where it holds code made of these
 * bytes by this Node under these flags, else compiled. Its `keep()`, at exit, writes the entry
 * again if the module then holds more than it. Call it once V8's flags for jq are set
 * (jq-v8-flags.ts).
 */
export function compileJq(wire: Uint8Array, env: Env = process.env): CompiledJq {
  const natives = env.NODE_DISABLE_COMPILE_CACHE ? undefined : nativeSerializer();
  const folder = natives && cacheDir(env);
  if (!natives || folder === undefined) return { module: new wasmApi.Module(wire), cached: false, keep: () => undefined };
  const entry = join(folder, 'code', `jq-${process.version}-${process.arch}-${cachedDataVersionTag()}.wasm-v8`);
  const wireHash = sha256(wire);
  const data = readEntry(entry, wireHash);
  // A fresh buffer of its own: V8's runtime function takes nothing else.
  const module = data && natives.deserialize(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength) as ArrayBuffer, wire);
  const compiled = module ?? new wasmApi.Module(wire);
  // An entry V8 refused (another CPU, say) is replaced by this run's, whatever their sizes.
  const had = module ? data.length : 0;
  return { module: compiled, cached: module !== undefined, keep: () => keepEntry(natives, compiled, entry, wireHash, had) };
}

let atExit: CompiledJq | undefined;

/**
 * Keeps `compiled` when the process exits, once jq's thread has done its work: the last one
 * given. A run compiles jq once; a process that runs many (a test's) holds one listener and
 * no module but the last.
 */
export function keepAtExit(compiled: CompiledJq): void {
  if (atExit === undefined) process.once('exit', () => atExit?.keep());
  atExit = compiled;
}

/** V8's serializer of WebAssembly modules, where this Node's V8 has its runtime functions. */
function nativeSerializer(): Natives | undefined {
  const serialize = natively<[WebAssembly.Module], ArrayBuffer>('module', 'return %SerializeWasmModule(module)');
  const deserialize = natively<[ArrayBuffer, Uint8Array], WebAssembly.Module | null | undefined>('data, wire', 'return %DeserializeWasmModule(data, wire)');
  try {
    serialize.compile();
    deserialize.compile();
  } catch {
    return undefined; // a V8 without them: a SyntaxError
  }
  // A module V8 refuses comes back as undefined (or null, by version), never as a throw.
  return { serialize: (module) => serialize.call(module), deserialize: (data, wire) => deserialize.call(data, wire) ?? undefined };
}

/**
 * A function calling V8's runtime functions, compiled and called with --allow-natives-syntax
 * on, and the flag off again after. Compiled at each call, not kept: V8 drops the bytecode of
 * a function unused for a while and compiles it again from its source on the next call,
 * which with the flag off would be a SyntaxError. The flag is on for both calls that matter
 * (V8 checks its flags when it deserializes, this one among them), never between them.
 */
function natively<A extends unknown[], R>(params: string, body: string) {
  const compile = () => new Function(params, body) as (...args: A) => R;
  const withFlag = <T>(work: () => T): T => {
    setFlagsFromString('--allow-natives-syntax');
    try {
      return work();
    } finally {
      setFlagsFromString('--no-allow-natives-syntax');
    }
  };
  return { compile: () => void withFlag(compile), call: (...args: A): R => withFlag(() => compile()(...args)) };
}

/** The entry's data, if its first line names these wire bytes and the data's own digest. */
export function readEntry(entry: string, wireHash: string): Buffer | undefined {
  try {
    // Not a plain read: one of a FIFO put there would wait for a writer.
    const bytes = readRegularFile(entry);
    const end = bytes.indexOf(10);
    const data = bytes.subarray(end + 1);
    return end !== -1 && bytes.toString('latin1', 0, end) === `${FORMAT} ${wireHash} ${sha256(data)}` ? data : undefined;
  } catch {
    return undefined;
  }
}

/** At exit: the module's code, where it holds more than the `had` bytes of the entry read. */
function keepEntry(natives: Natives, module: WebAssembly.Module, entry: string, wireHash: string, had: number): void {
  try {
    const data = new Uint8Array(natives.serialize(module));
    if (data.length <= had) return;
    const folder = join(entry, '..');
    makePrivateFolder(folder);
    // A cache: not flushed to disk; a torn or stale entry fails its digest and is compiled anew.
    replaceFile(entry, Buffer.concat([Buffer.from(`${FORMAT} ${wireHash} ${sha256(data)}\n`, 'latin1'), data]), { durable: false });
    removeFilesOlderThan(folder, Date.now() - MAX_AGE_MS);
  } catch {
    // Runs at exit: nothing here may throw, or change the exit code.
  }
}
