import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, sgq, useSandboxProcess } from '../helpers/e2e.js';
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

  it('runs a line with a flag whose part the route bundle leaves out (--jq, --sandbox) from the full route bundle', async () => {
    const jq = await bundlesOf(['graph', 'followers', 'alice', '-q', '--limit', '2', '--jq=.username'], sandbox.env());
    expect([jq.run.exitCode, jq.run.stderr]).toEqual([0, '']);
    expect(jq.run.stdout.split('\n')).toHaveLength(2);
    // cli.cjs asks dist/jq-early.cjs whether the filter needs jq's thread; a line without --jq never loads it (above).
    expect(jq.bundles.sort()).toEqual(['cli.cjs', 'jq-early.cjs', 'route-full.cjs']);
    const inProcess = await bundlesOf(['--sandbox', 'graph', 'followers', 'alice', '-q', '--limit', '1'], {});
    expect([inProcess.run.exitCode, inProcess.run.stderr]).toEqual([0, '']);
    expect(inProcess.bundles.sort()).toEqual(['cli.cjs', 'route-full.cjs']);
  });

  it('leaves those parts out of the route bundle, and hands a line that needs one to the whole program', async () => {
    const bundle = join(BIN, '../../dist/route-main.cjs');
    for (const part of ['jq', 'snapshot-jobs', 'server']) expect(readFileSync(bundle, 'utf8')).toContain(`${part} is left out of dist/route-main.cjs`);
    expect(readFileSync(join(BIN, '../../dist/route-full.cjs'), 'utf8')).not.toContain('left out of dist/route-main.cjs');
    // A line the launcher did not send to the full bundle: the route bundle does nothing with it.
    const { mainRoute } = createRequire(import.meta.url)(bundle) as { mainRoute: (argv: string[], io: unknown) => Promise<number | undefined> };
    const untouchable = new Proxy({}, { get: () => { throw new Error('the route bundle used its io'); } });
    await expect(mainRoute(['graph', 'followers', 'alice', '--key', 'username'], untouchable)).resolves.toBeUndefined();
  });

  it('fails in one line from the route bundle too', async () => {
    const { run, bundles } = await bundlesOf(['graph', 'followers', 'alice', '-q', '--base-url', 'http://127.0.0.1:1', '--retries', '0'], { ...sandbox.env(), SGQ_BASE_URL: '' });
    expect(run.exitCode).not.toBe(0);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(/^sgq: /);
    expect(bundles.sort()).toEqual(['cli.cjs', 'route-main.cjs']);
  });
});
