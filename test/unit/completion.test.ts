import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SETTING_NAMES } from '../../src/core/config.js';
import { FORMATS } from '../../src/core/format-names.js';
import { allCommands, buildProgram, fillAll } from '../../src/cli/program.js';
import { lines, runSgq, tempDir } from '../helpers/run.js';

// The scripts are generated from the command tree; these tests hold the checked-in copies to
// the tree and the tree's commands, flags and choices to the scripts.

const FILES = { bash: 'completions/sgq.bash', zsh: 'completions/_sgq', fish: 'completions/sgq.fish' } as const;
const SHELLS = Object.keys(FILES) as (keyof typeof FILES)[];

async function script(shell: string): Promise<string> {
  const r = await runSgq(['completion', shell]);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return r.stdout;
}

/** How each script offers a subcommand name. */
function offered(shell: keyof typeof FILES, name: string): RegExp {
  const n = name.replace(/[-]/g, '\\-');
  if (shell === 'bash') return new RegExp(`REPLY='(?:[^']* )?${n}(?: [^']*)?' ;;`);
  if (shell === 'zsh') return new RegExp(`^ +'${n}:`, 'm');
  return new RegExp(`-a ${n} -d `);
}

function tree() {
  const sink = { write: () => true } as never;
  const program = buildProgram({ stdout: sink, stderr: sink, stdin: sink, env: {}, stdoutIsTTY: false, stderrIsTTY: false, stdinIsTTY: false }, { exitCode: 0 });
  fillAll(program);
  return { program, commands: allCommands(program) };
}

describe('sgq completion', () => {
  it.each(SHELLS)('%s: the checked-in script is what the command tree generates', async (shell) => {
    const generated = await script(shell);
    const checkedIn = readFileSync(FILES[shell], 'utf8');
    expect(generated, `${FILES[shell]} has drifted from the command tree: run \`npm run completions\` and commit the result`).toBe(checkedIn);
  });

  it.each(SHELLS)('%s: the script is the same on every run', async (shell) => {
    expect(await script(shell)).toBe(await script(shell));
  });

  it.each(SHELLS)('%s: names every command, every long flag of graph followers, and the values of -o', async (shell) => {
    const text = await script(shell);
    const { program, commands } = tree();
    for (const cmd of commands.slice(1)) expect(text, `command ${cmd.name()}`).toMatch(offered(shell, cmd.name()));
    const followers = program.commands.find((c) => c.name() === 'graph')!.commands.find((c) => c.name() === 'followers')!;
    const longs = [...followers.options, ...program.options].map((o) => o.long).filter((l): l is string => !!l);
    expect(longs).toContain('--all');
    expect(longs).toContain('--profile');
    const flag = (long: string) => (shell === 'fish' ? `-l ${long.slice(2)} ` : long);
    for (const long of longs) expect(text, `flag ${long}`).toContain(flag(long));
    expect(text).toContain(FORMATS.join(' '));
    expect(text).toContain(SETTING_NAMES.join(' '));
    expect(text).toContain('bash zsh fish');
    expect(text).toContain('html truncated text data-object bad-page huge');
    expect(text).toContain('completion --profiles');
  });

  it('bash: the per-command tables really come from the tree', async () => {
    const text = await script('bash');
    expect(text).toMatch(/'graph' *\) REPLY='followers following'/);
    expect(text).toMatch(/'metadata' *\) REPLY='history tweets latest-tweets userid'/);
    expect(text).toMatch(/-o \| --output\) REPLY='w:table json ndjson csv tsv yaml parquet'/);
    expect(text).toContain('complete -F _sgq sgq');
  });

  it('does not offer hidden options', async () => {
    for (const shell of SHELLS) expect(await script(shell)).not.toMatch(/--profiles\b(?! 2>)/);
  });

  it('an unknown shell is a usage error naming the ones there are', async () => {
    const r = await runSgq(['completion', 'tcsh']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^sgq: .*tcsh.*bash, zsh, fish/);
  });

  it('no shell is a usage error', async () => {
    const r = await runSgq(['completion']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('bash, zsh, fish');
  });

  it('--profiles prints the profile names, one a line, and takes no shell', async () => {
    const dir = tempDir();
    const env = { SGQ_CONFIG_DIR: dir };
    expect((await runSgq(['completion', '--profiles'], { env })).stdout).toBe('');
    expect((await runSgq(['config', 'set', 'base-url', 'http://x', '--profile', 'work'], { env })).code).toBe(0);
    expect((await runSgq(['config', 'set', 'output', 'csv', '--profile', 'personal'], { env })).code).toBe(0);
    const r = await runSgq(['completion', '--profiles'], { env });
    expect(r.code).toBe(0);
    expect(lines(r.stdout).sort()).toEqual(['personal', 'work']);
    const both = await runSgq(['completion', 'bash', '--profiles'], { env });
    expect(both.code).toBe(2);
  });

  it('the help shows <shell> and hides --profiles', async () => {
    const r = await runSgq(['completion', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Usage: sgq completion <shell>');
    expect(r.stdout).not.toContain('--profiles');
  });
});
