import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { maxOldSpaceFlag, oldSpaceBytes } from '../../src/core/sort/old-space.js';

const MIB = 1024 * 1024;
const main = { limit: 4144 * MIB, isMainThread: true, execArgv: [] as string[], nodeOptions: '' };

describe('maxOldSpaceFlag', () => {
  it('reads the last --max-old-space-size in either spelling, with = or as the next word, and nothing else', () => {
    expect(maxOldSpaceFlag(['--max-old-space-size=32'])).toBe(32);
    expect(maxOldSpaceFlag(['--max_old_space_size=64', 'bin/sgq.cjs'])).toBe(64);
    expect(maxOldSpaceFlag(['--max-old-space-size', '48'])).toBe(48);
    expect(maxOldSpaceFlag(['--max-old-space-size=32', '--stack-size=900', '--max-old-space-size=96'])).toBe(96);
    expect(maxOldSpaceFlag(['--max-old-space-size=lots', '--max-old-space-size-x=8', '--max-semi-space-size=16'])).toBeUndefined();
    expect(maxOldSpaceFlag([])).toBeUndefined();
  });
});

describe('oldSpaceBytes', () => {
  it('the main thread: the command line flag, else NODE_OPTIONS, else the heap limit; never above the limit', () => {
    expect(oldSpaceBytes({ ...main, limit: 80 * MIB, execArgv: ['--max-old-space-size=32'], nodeOptions: '--max-old-space-size=64' })).toBe(32 * MIB);
    expect(oldSpaceBytes({ ...main, limit: 112 * MIB, nodeOptions: '--trace-warnings  --max-old-space-size=64' })).toBe(64 * MIB);
    expect(oldSpaceBytes(main)).toBe(4144 * MIB);
    expect(oldSpaceBytes({ ...main, limit: 100 * MIB, execArgv: ['--max-old-space-size=4096'] })).toBe(100 * MIB);
  });

  it('a worker thread: its heap limit less the young generation its resource limits name', () => {
    expect(oldSpaceBytes({ ...main, isMainThread: false, limit: 80 * MIB, youngMb: 48, execArgv: ['--max-old-space-size=999'] })).toBe(32 * MIB);
    expect(oldSpaceBytes({ ...main, isMainThread: false, limit: 80 * MIB })).toBe(80 * MIB);
  });

  // What the two rules rest on, asked of this Node line's V8: heap_size_limit counts the young
  // generation (so the main thread reads the flag), and a worker's is its old generation plus
  // the young one its resource limits report, and ~2 MiB (whether the old size is the flag's,
  // which wins, or the worker's own resource limits').
  const ask = (flags: string[], resourceLimits?: object) => {
    const script = `
      const { Worker } = require('node:worker_threads');
      const probe = 'const { parentPort, resourceLimits } = require("node:worker_threads");' +
        'parentPort.postMessage({ limit: require("node:v8").getHeapStatistics().heap_size_limit, youngMb: resourceLimits.maxYoungGenerationSizeMb })';
      const w = new Worker(probe, { eval: true, resourceLimits: ${JSON.stringify(resourceLimits)} });
      w.once('message', (worker) => {
        console.log(JSON.stringify({ main: require('node:v8').getHeapStatistics().heap_size_limit, worker }));
        void w.terminate();
      });`;
    return JSON.parse(execFileSync(process.execPath, [...flags, '-e', script], { encoding: 'utf8' })) as { main: number; worker: { limit: number; youngMb: number } };
  };
  const inWorker = (seen: { limit: number; youngMb: number }) => oldSpaceBytes({ ...main, isMainThread: false, ...seen });

  it("rests on what this Node line's V8 reports: under --max-old-space-size, in the main thread and a worker", () => {
    const seen = ask(['--max-old-space-size=32']);
    expect(seen.main).toBeGreaterThan(32 * MIB);
    expect(oldSpaceBytes({ ...main, limit: seen.main, execArgv: ['--max-old-space-size=32'] })).toBe(32 * MIB);
    expect(inWorker(seen.worker)).toBeGreaterThanOrEqual(32 * MIB);
    expect(inWorker(seen.worker)).toBeLessThanOrEqual(36 * MIB);
  });

  it("rests on what this Node line's V8 reports: a worker's own resource limits", () => {
    const seen = ask([], { maxOldGenerationSizeMb: 24, maxYoungGenerationSizeMb: 4 });
    expect(inWorker(seen.worker)).toBeGreaterThanOrEqual(24 * MIB);
    expect(inWorker(seen.worker)).toBeLessThanOrEqual(28 * MIB);
  });
});
