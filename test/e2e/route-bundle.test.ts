import { readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sgq, useSandboxProcess } from '../helpers/e2e.js';
import { tempDir } from '../helpers/run.js';

// A route command starts with dist/route-main.cjs (src/cli/route-main.ts), without Commander's
// program; a line its parser leaves to Commander is run by dist/main.cjs. A preload writes the
// files the process required when it exits.

async function bundlesOf(args: string[], env: Record<string, string>) {
  const dir = tempDir();
  const list = join(dir, 'files.txt');
  const preload = join(dir, 'record-files.cjs');
  writeFileSync(preload, `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(list)}, Object.keys(require.cache).join('\\n')));\n`);
  const run = await sgq(args, { env, nodeFlags: ['--require', preload] });
  const bundles = readFileSync(list, 'utf8').split('\n').filter((f) => f.includes('/dist/') && !f.includes('/vendor/')).map((f) => basename(f));
  return { run, bundles };
}

describe('a route command', () => {
  const sandbox = useSandboxProcess();

  it('runs from the route bundle alone', async () => {
    const { run, bundles } = await bundlesOf(['graph', 'followers', 'alice', '-q', '--limit', '3'], sandbox.env());
    expect([run.exitCode, run.stderr]).toEqual([0, '']);
    expect(run.stdout.trim().split('\n')).toHaveLength(3);
    expect(bundles.sort()).toEqual(['cli.cjs', 'route-main.cjs']);
  });

  it('leaves a line its parser is not sure of to the whole program, which says what is wrong', async () => {
    const { run, bundles } = await bundlesOf(['graph', 'followers', 'alice', '--limit', '0'], sandbox.env());
    expect(run.exitCode).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe("sgq: option '--limit <n>' argument '0' is invalid. --limit must be a whole number from 1 up; see `sgq graph followers --help`");
    expect(bundles.sort()).toEqual(['cli.cjs', 'main.cjs', 'route-main.cjs']);
  });

  it('fails in one line from the route bundle too', async () => {
    const { run, bundles } = await bundlesOf(['graph', 'followers', 'alice', '-q', '--base-url', 'http://127.0.0.1:1', '--retries', '0'], { ...sandbox.env(), SGQ_BASE_URL: '' });
    expect(run.exitCode).not.toBe(0);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(/^sgq: /);
    expect(bundles.sort()).toEqual(['cli.cjs', 'route-main.cjs']);
  });
});
