import { describe, expect, it } from 'vitest';
import { allCommands, buildProgram, fillAll } from '../../src/cli/program.js';
import { runSgq } from '../helpers/run.js';
import { HELP_TOPICS } from '../../src/cli/help/topics.js';
import { PassThrough } from 'node:stream';

function commandPaths(): string[][] {
  const sink = new PassThrough();
  const program = buildProgram({ stdout: sink, stderr: sink, stdin: sink, env: {}, stdoutIsTTY: false, stderrIsTTY: false, stdinIsTTY: false }, { exitCode: 0 });
  fillAll(program);
  const path = (cmd: (typeof program.commands)[number]): string[] => (cmd.parent ? [...path(cmd.parent), cmd.name()] : []);
  const topics = new Set(HELP_TOPICS.map((t) => t.name));
  return allCommands(program).map(path).filter((p) => p.length > 0 && p[p.length - 1] !== 'help' && !topics.has(p[0]!));
}

describe('--help', () => {
  it.each(commandPaths().map((p) => [p.join(' '), p] as const))('sgq %s --help shows examples and exits 0', async (_name, path) => {
    const r = await runSgq([...path, '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Usage: sgq ${path.join(' ')}`);
    expect(r.stdout).toContain('Examples:');
  });

  it('builds a namespace on demand for `sgq help <namespace>`', async () => {
    const r = await runSgq(['help', 'graph']);
    expect(r.stdout).toContain('followers');
    expect(r.stdout).toContain('following');
  });

  it('builds deferred options before parsing them', async () => {
    const r = await runSgq(['sandbox', '--port', 'x']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--port');
    const c = await runSgq(['config', 'nope']);
    expect(c.code).toBe(2);
    expect(c.stderr).toContain("unknown command 'nope'");
  });
});

describe('help of a namespace, however it is asked for', () => {
  it.each(['graph', 'alpha', 'metadata', 'lists'])('`sgq help %s` is `sgq %s --help`, listing each verb with its arguments', async (ns) => {
    const [byCommand, byFlag] = [await runSgq(['help', ns]), await runSgq([ns, '--help'])];
    expect(byCommand.stdout).toBe(byFlag.stdout);
    expect(byFlag.stdout).toMatch(/\[options\] <(user|list)/);
  });
});
