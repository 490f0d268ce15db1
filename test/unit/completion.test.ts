import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SETTING_NAMES } from '../../src/core/config.js';
import { FORMATS } from '../../src/core/format-names.js';
import { MALFORMED_KINDS } from '../../src/sandbox/fault-kinds.js';
import { allCommands, buildProgram, fillAll } from '../../src/cli/program/program.js';
import { HELP_TOPICS } from '../../src/cli/help/topics.js';
import { FORMAT_DESCRIPTIONS } from '../../src/cli/help/value-meanings.js';
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
  // Help topics are hidden commands: `sgq help formats`, never offered as a command.
  const topics = new Set(HELP_TOPICS.map((t) => t.name));
  return { program, commands: allCommands(program).filter((c) => !topics.has(c.name())) };
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
    // fish and zsh give each value its own description (word\t'what it is', word\:"what it is"); bash lists the words.
    const hasList = (words: readonly string[]) => {
      if (shell === 'bash') return expect(text).toContain(words.join(' '));
      // ((a\:"…" b\:"…")), the words in order.
      if (shell === 'zsh') return expect(text).toMatch(new RegExp(`\\(\\(${words.map((w) => `${w}\\\\:"[^"]*"`).join(' ')}\\)\\)`));
      for (const w of words) expect(text).toContain(`${w}\\\\t\\'`);
    };
    hasList(FORMATS);
    hasList(SETTING_NAMES);
    hasList(['bash', 'zsh', 'fish']);
    hasList(MALFORMED_KINDS);
    expect(text).toContain('completion --profiles');
    for (const topic of HELP_TOPICS) expect(text, topic.name).not.toMatch(offered(shell, topic.name));
  });

  it.each(SHELLS)('%s: offers --version for sgq alone, never for a subcommand', async (shell) => {
    const text = await script(shell);
    if (shell === 'bash') {
      expect(text).toMatch(/^ {4}''\) REPLY='-V --version' ;;$/m);
      expect(text.match(/--version/g)).toHaveLength(1);
    } else if (shell === 'zsh') {
      const functions = text.split(/\n(?=# sgq)/);
      expect(functions.filter((f) => f.includes('--version')).map((f) => f.split('\n')[0])).toEqual(['# sgq']);
      expect(text).not.toMatch(/_sgq__globals\(\) \{[^}]*--version/);
    } else {
      expect(text.split('\n').filter((l) => l.includes('-l version'))).toEqual([`complete -c sgq -n '__sgq_in ""' -s V -l version -d 'print the version'`]);
    }
  });

  it('fish: every value of a fixed list has its own description, and no argument says only its name', async () => {
    const text = await script('fish');
    // In the script's single-quoted -a: json\\t\'…\' (fish reads it as json, a tab, the description).
    expect(text).toContain(`json\\\\t\\'${FORMAT_DESCRIPTIONS.json}\\'`);
    expect(text).toContain(`base-url\\\\t\\'service address, may carry a path prefix\\'`);
    const { program } = tree();
    const { completionTree, walk } = await import('../../src/cli/completion/tree.js');
    const specs = completionTree(program);
    const lists = [...specs.globals, ...walk(specs.root).flatMap((c) => [...c.options, ...c.arguments])].map((o) => o.values).filter((v) => v.kind === 'words');
    expect(lists.length).toBeGreaterThan(5);
    for (const v of lists) {
      if (v.kind !== 'words') continue;
      expect(v.descriptions, v.words.join(' ')).toBeDefined();
      const said = v.words.map((w) => v.descriptions![w]);
      expect(new Set(said).size, v.words.join(' ')).toBe(v.words.length);
    }
    expect(text).not.toMatch(/-d 'key'$/m);
  });

  it('bash: the per-command tables really come from the tree', async () => {
    const text = await script('bash');
    expect(text).toMatch(/'graph' *\) REPLY='followers following'/);
    expect(text).toMatch(/'metadata' *\) REPLY='history tweets latest-tweets userid follower-count past-usernames latest current current-followers current-following current-tweets'/);
    expect(text).toMatch(/'alpha' *\) REPLY='score-history classification'/);
    expect(text).toMatch(/-o \| --output\) REPLY='w:table json ndjson csv tsv yaml yaml-stream parquet'/);
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
