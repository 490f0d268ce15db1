import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sgq, useSandboxProcess } from '../helpers/e2e.js';
import { tempDir } from '../helpers/run.js';

// A one-page command is what scripts and loops run most (issue 22's one-shot figure): it loads
// none of Node's modules that only other paths need. A preload writes process.moduleLoadList
// (every Node module the process loaded) when the run exits; the run itself is the real one.

/** The Node modules a run of `args` loaded, and the run's result. */
async function loadedBy(args: string[], env: Record<string, string>) {
  const dir = tempDir();
  const list = join(dir, 'modules.txt');
  const preload = join(dir, 'record-modules.cjs');
  writeFileSync(preload, `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(list)}, process.moduleLoadList.join('\\n')));\n`);
  const run = await sgq(args, { env, nodeFlags: ['--require', preload] });
  return { run, modules: readFileSync(list, 'utf8').split('\n') };
}

describe('a one-page command', () => {
  const sandbox = useSandboxProcess();

  // node:module turns on Node's compile cache, on the lines that have one (bin/sgq.cjs).
  const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
  const compileCache = major > 22 || (major === 22 && minor >= 1);

  it('loads neither the worker threads of --jq, node:zlib of Parquet, node:module (but for Node\'s compile cache), node:timers/promises, node:os nor the recursive remover of fs.rmSync', async () => {
    const { run, modules } = await loadedBy(['graph', 'followers', 'alice', '-q'], sandbox.env());
    expect(run.exitCode).toBe(0);
    expect(run.stdout.split('\n').length).toBeGreaterThan(1);
    // The check itself works: the run did load the modules it needs.
    expect(modules).toContain('NativeModule http');
    for (const unused of ['worker_threads', 'zlib', ...(compileCache ? [] : ['module']), 'timers/promises', ...(process.platform === 'linux' ? ['os'] : []), 'internal/fs/rimraf']) expect(modules).not.toContain(`NativeModule ${unused}`);
  });

  it('never makes process.stderr when it has nothing to say (Node makes a socket for a pipe), and does when it has', async () => {
    const dir = tempDir();
    const made = join(dir, 'stderr-made.txt');
    const preload = join(dir, 'watch-stderr.cjs');
    // Notes the first read of process.stderr, by anyone (sgq, Node's own net module), then steps aside.
    writeFileSync(
      preload,
      `const own = Object.getOwnPropertyDescriptor(process, 'stderr');
Object.defineProperty(process, 'stderr', { configurable: true, enumerable: true, get() {
  Object.defineProperty(process, 'stderr', own);
  require('node:fs').writeFileSync(${JSON.stringify(made)}, new Error().stack);
  return own.get.call(process);
} });
`,
    );
    const quiet = await sgq(['graph', 'followers', 'alice', '-q'], { env: sandbox.env(), nodeFlags: ['--require', preload] });
    expect(quiet.exitCode).toBe(0);
    expect(quiet.stdout.split('\n').length).toBeGreaterThan(1);
    expect(existsSync(made) ? readFileSync(made, 'utf8') : 'never made').toBe('never made');
    // The check itself works: a run that has something to say makes it, and says it.
    const told = await sgq(['graph', 'followers', 'alice'], { env: sandbox.env(), nodeFlags: ['--require', preload] });
    expect(told.exitCode).toBe(0);
    expect(told.stderr).toContain('there are more pages');
    expect(existsSync(made)).toBe(true);
  });

  it('with --jq, loads the worker threads it runs jq in', async () => {
    const { run, modules } = await loadedBy(['graph', 'followers', 'alice', '-q', '--jq', '.username | length'], sandbox.env());
    expect(run.exitCode).toBe(0);
    expect(modules).toContain('NativeModule worker_threads');
  });
});
