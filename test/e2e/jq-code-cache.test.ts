import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { canKeepJqCode, readEntry } from '../../src/cli/jq/jq-code-cache.js';
import { BIN, sgq } from '../helpers/e2e.js';
import { tempDir } from '../helpers/run.js';

// The built sgq keeps the code V8 optimized of jq's WebAssembly between `--jq` runs
// (src/cli/jq/jq-code-cache.ts), on the Node lines whose V8 can serialize a module (20, 22,
// 24). It can make a run faster, never change what it prints or make it fail.

const canKeep = canKeepJqCode();
const wire = readFileSync(join(dirname(BIN), '..', 'dist', 'vendor', 'build', 'jq.wasm'));
const wireHash = createHash('sha256').update(wire).digest('hex');
const input = `${Array.from({ length: 20_000 }, (_, i) => JSON.stringify({ username: `user_${i}_名前`, name: `Ünïcode 😀\t${i}`, last_checked: '2026-11-29T03:15:00.123456Z', n: 1234567890123 + i / 7 })).join('\n')}\n`;
// A filter only jq-wasm runs (outside sgq's subset).
const FILTER = '[.username, .name, .last_checked[0:10]] | join(" ")';

const run = (cache: string, env: Record<string, string> = {}) => sgq(['fmt', '-', '--jq', FILTER], { input, env: { XDG_CACHE_HOME: cache, ...env }, timeout: 60_000 });
/** The jq entries of the cache folder `cache`. */
const jqEntries = (cache: string): string[] => {
  try {
    return readdirSync(join(cache, 'sgq', 'code')).filter((name) => name.startsWith('jq-')).map((name) => join(cache, 'sgq', 'code', name));
  } catch {
    return [];
  }
};

describe("jq's optimized code, kept between --jq runs", () => {
  it(canKeep ? 'is kept by the first run (0600) and read by the next, which prints the same' : `is not kept on Node ${process.versions.node}, whose V8 cannot serialize a module; jq runs as before`, async () => {
    const cache = tempDir();
    const first = await run(cache);
    expect([first.exitCode, first.stderr]).toEqual([0, '']);
    expect(first.stdout.split('\n')[0]).toBe('user_0_名前 Ünïcode 😀\t0 2026-11-29');
    const entries = jqEntries(cache);
    expect(entries).toHaveLength(canKeep ? 1 : 0);
    if (!canKeep) return;
    expect(statSync(entries[0]!).mode & 0o777).toBe(0o600);
    expect(readEntry(entries[0]!, wireHash)).toBeDefined();
    const second = await run(cache);
    expect([second.exitCode, second.stdout, second.stderr]).toEqual([0, first.stdout, '']);
  });

  it.runIf(canKeep)('a damaged entry is not run: the run prints the same and leaves a sound one', async () => {
    const cache = tempDir();
    const sound = await run(cache);
    const [entry] = jqEntries(cache);
    const bytes = readFileSync(entry!);
    const at = bytes.indexOf(10) + 4096;
    for (const damaged of [Buffer.concat([bytes.subarray(0, at), Buffer.alloc(512, 0xa5), bytes.subarray(at + 512)]), bytes.subarray(0, bytes.length >> 1)]) {
      writeFileSync(entry!, damaged);
      const again = await run(cache);
      expect([again.exitCode, again.stdout, again.stderr]).toEqual([0, sound.stdout, '']);
      expect(readEntry(entry!, wireHash)).toBeDefined();
    }
  });

  it.runIf(canKeep)('two runs at once over one cache both print right, and leave a sound entry', async () => {
    const cache = tempDir();
    const [a, b] = await Promise.all([run(cache), run(cache)]);
    expect([a.exitCode, a.stderr, b.exitCode, b.stderr]).toEqual([0, '', 0, '']);
    expect(b.stdout).toBe(a.stdout);
    const [c, d] = await Promise.all([run(cache), run(cache)]);
    expect([c.stdout === a.stdout, d.stdout === a.stdout]).toEqual([true, true]);
    expect(jqEntries(cache)).toHaveLength(1);
    expect(readEntry(jqEntries(cache)[0]!, wireHash)).toBeDefined();
  });

  it('is off with NODE_DISABLE_COMPILE_CACHE=1', async () => {
    const cache = tempDir();
    const off = await run(cache, { NODE_DISABLE_COMPILE_CACHE: '1' });
    expect([off.exitCode, off.stderr]).toEqual([0, '']);
    expect(jqEntries(cache)).toEqual([]);
  });
});
