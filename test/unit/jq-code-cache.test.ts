import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { cachedDataVersionTag } from 'node:v8';
import { loadJq } from 'jq-wasm';
import { describe, expect, it } from 'vitest';
import { canKeepJqCode, compileJq, keepAtExit, readEntry, type CompiledJq } from '../../src/cli/jq/jq-code-cache.js';
import { tempDir } from '../helpers/run.js';

// jq's WebAssembly with V8's optimized code kept between runs (src/cli/jq/jq-code-cache.ts):
// what it keeps, and that code is never run for wire bytes or data other than its own. The
// e2e test (test/e2e/jq-code-cache.test.ts) runs it in the built sgq.

// The package's own (its exports do not name it): beside its entry point.
const wire = readFileSync(join(dirname(createRequire(import.meta.url).resolve('jq-wasm')), 'build', 'jq.wasm'));
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const records = Array.from({ length: 3000 }, (_, i) => JSON.stringify({ username: `user_${i}_名前`, name: `😀 ${i}\t`, n: i * 7 })).join('\n');
const FILTER = '[.username, .name, (.n | tostring)] | join(" ")';

/** jq's output over `records` with this module, run often enough that V8 optimizes some of jq. */
async function runJq(module: WebAssembly.Module, rounds = 4): Promise<string> {
  const jq = await loadJq({ wasmModule: module });
  let out = '';
  for (let i = 0; i < rounds; i++) out = jq.raw(records, FILTER, ['-r']).stdout;
  return out;
}

/** The cache's entries for jq in `cache` (its XDG_CACHE_HOME). */
const entries = (cache: string): string[] => {
  try {
    return readdirSync(join(cache, 'sgq', 'code')).filter((name) => name.startsWith('jq-') && name.endsWith('.wasm-v8'));
  } catch {
    return [];
  }
};

// (the TypeScript library has WebAssembly's types, not its value)
const { Module } = (globalThis as unknown as { WebAssembly: { Module: new (bytes: Uint8Array) => WebAssembly.Module } }).WebAssembly;
const expected = await runJq(new Module(wire), 1);

describe("jq's code kept between runs", () => {
  it('leaves V8 with the flags it had: the code cache of sgq itself is checked against them', () => {
    const before = cachedDataVersionTag();
    canKeepJqCode();
    compileJq(wire, { XDG_CACHE_HOME: tempDir() });
    expect(cachedDataVersionTag()).toBe(before);
  });

  it.runIf(canKeepJqCode())('keeps the module at exit in code/ (0700, the entry 0600), and the next compile starts from it with the same answers', async () => {
    const env = { XDG_CACHE_HOME: tempDir() };
    const first = compileJq(wire, env);
    expect(first.cached).toBe(false);
    expect(await runJq(first.module)).toBe(expected);
    first.keep();
    const [entry] = entries(env.XDG_CACHE_HOME);
    expect(entry).toMatch(new RegExp(`^jq-${process.version}-${process.arch}-\\d+\\.wasm-v8$`));
    const code = join(env.XDG_CACHE_HOME, 'sgq', 'code');
    expect(statSync(code).mode & 0o777).toBe(0o700);
    expect(statSync(join(code, entry!)).mode & 0o777).toBe(0o600);
    const second = compileJq(wire, env);
    expect(second.cached).toBe(true);
    expect(await runJq(second.module)).toBe(expected);
    // Its code is still there for the next run: kept again only if it grew.
    const size = statSync(join(code, entry!)).size;
    second.keep();
    expect(statSync(join(code, entry!)).size).toBeGreaterThanOrEqual(size);
    expect(compileJq(wire, env).cached).toBe(true);
  });

  it.runIf(canKeepJqCode())('never runs code kept for other wire bytes, or data damaged, cut short or swapped: it compiles them anew', async () => {
    const env = { XDG_CACHE_HOME: tempDir() };
    const first = compileJq(wire, env);
    await runJq(first.module, 2);
    first.keep();
    const file = join(env.XDG_CACHE_HOME, 'sgq', 'code', entries(env.XDG_CACHE_HOME)[0]!);
    const whole = readFileSync(file);
    // Another jq.wasm: the same module with a custom section appended (id 0, 5 bytes, name "sgq", 1 byte).
    const other = Buffer.concat([wire, Buffer.from([0, 5, 3, 0x73, 0x67, 0x71, 1])]);
    expect(new Module(other)).toBeInstanceOf(Module);
    const other_ = compileJq(other, env);
    expect(other_.cached).toBe(false);
    expect(await runJq(other_.module, 1)).toBe(expected);
    const start = whole.indexOf(10) + 1;
    const header = whole.subarray(0, start - 1).toString('latin1');
    for (const [what, bytes] of [
      ['a damaged block', Buffer.concat([whole.subarray(0, start + 4096), Buffer.alloc(512, 0xa5), whole.subarray(start + 4608)])],
      ['cut short', whole.subarray(0, whole.length - 100)],
      ['no first line', whole.subarray(start)],
      // Sound data behind a first line that names other wire bytes.
      ['swapped', Buffer.concat([Buffer.from(header.replace(sha256(wire), sha256(other)) + '\n', 'latin1'), whole.subarray(start)])],
    ] as const) {
      writeFileSync(file, bytes);
      const compiled = compileJq(wire, env);
      expect(compiled.cached, what).toBe(false);
      expect(await runJq(compiled.module, 1), what).toBe(expected);
    }
    // A FIFO in its place is refused at once, not waited on.
    const fifo = join(tempDir(), 'fifo');
    execFileSync('mkfifo', [fifo]);
    expect(readEntry(fifo, sha256(wire))).toBeUndefined();
  });

  it.runIf(canKeepJqCode())('an entry V8 itself refuses (made by another V8, say) is replaced by the next run, however large it was', async () => {
    const env = { XDG_CACHE_HOME: tempDir() };
    const first = compileJq(wire, env);
    await runJq(first.module);
    first.keep();
    const file = join(env.XDG_CACHE_HOME, 'sgq', 'code', entries(env.XDG_CACHE_HOME)[0]!);
    const whole = readFileSync(file);
    const start = whole.indexOf(10) + 1;
    // V8's own header: a magic number, then its version's hash. Another hash, and padding that
    // makes the entry larger than anything a run keeps, behind a first line that matches it.
    const data = Buffer.concat([whole.subarray(start), Buffer.alloc(1 << 20)]);
    data.writeUInt32LE((data.readUInt32LE(4) ^ 0x5a5a5a5a) >>> 0, 4);
    writeFileSync(file, Buffer.concat([Buffer.from(`sgq-wasm-cache 1 ${sha256(wire)} ${sha256(data)}\n`, 'latin1'), data]));
    expect(readEntry(file, sha256(wire))?.length).toBe(data.length);
    const refused = compileJq(wire, env);
    expect(refused.cached).toBe(false);
    expect(await runJq(refused.module, 1)).toBe(expected);
    refused.keep();
    expect(compileJq(wire, env).cached).toBe(true);
  });

  it('keeps nothing with NODE_DISABLE_COMPILE_CACHE=1, or where V8 cannot serialize a module (Node 26)', async () => {
    const off = { XDG_CACHE_HOME: tempDir(), NODE_DISABLE_COMPILE_CACHE: '1' };
    const compiled = compileJq(wire, off);
    expect(compiled.cached).toBe(false);
    expect(await runJq(compiled.module, 1)).toBe(expected);
    compiled.keep();
    expect(entries(off.XDG_CACHE_HOME)).toEqual([]);
    if (!canKeepJqCode()) {
      const env = { XDG_CACHE_HOME: tempDir() };
      const plain = compileJq(wire, env);
      expect(await runJq(plain.module, 1)).toBe(expected);
      plain.keep();
      expect(entries(env.XDG_CACHE_HOME)).toEqual([]);
    }
  });

  it('keeps the last module given at exit, through one listener however many runs a process makes', () => {
    const before = process.listeners('exit');
    const kept: number[] = [];
    const compiled = (n: number): CompiledJq => ({ module: {} as WebAssembly.Module, cached: false, keep: () => void kept.push(n) });
    for (let n = 1; n <= 12; n++) keepAtExit(compiled(n));
    const added = process.listeners('exit').filter((listener) => !before.includes(listener));
    expect(added).toHaveLength(1);
    (added[0] as () => void)();
    expect(kept).toEqual([12]);
  });

  it.runIf(canKeepJqCode())('a cache folder it cannot write costs the entry, never the run', () => {
    const cache = tempDir();
    mkdirSync(join(cache, 'sgq'));
    // A file where code/ should be: the folder cannot be made.
    writeFileSync(join(cache, 'sgq', 'code'), '');
    const compiled = compileJq(wire, { XDG_CACHE_HOME: cache });
    expect(() => compiled.keep()).not.toThrow();
  });
});
