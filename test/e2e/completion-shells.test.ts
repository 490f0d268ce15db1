import { execa } from 'execa';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { SETTING_NAMES } from '../../src/core/config.js';
import { FORMATS } from '../../src/core/format-names.js';
import { MALFORMED_KINDS } from '../../src/sandbox/fault-kinds.js';
import { buildProgram } from '../../src/cli/program/program.js';
import { HELP_TOPICS } from '../../src/cli/help/topics.js';
import { FORMAT_DESCRIPTIONS } from '../../src/cli/help/value-meanings.js';
import { BIN } from '../helpers/e2e.js';
import { tempDir } from '../helpers/run.js';

// Loads each checked-in script into the real shell and asks it what `sgq …<TAB>` completes.
// bash: the registered function with COMP_WORDS set as readline would set them. zsh: an
// interactive zsh on a pseudo-terminal (zpty) that really presses TAB, with compadd wrapped to
// print what is offered. fish: `complete -C`. The profile names come from the built binary,
// found on PATH as `sgq`, reading a temporary config folder.

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const COMPLETIONS = join(REPO, 'completions');

type Shell = 'bash' | 'zsh' | 'fish';

// Each test starts several real shells (zsh with compinit on a pseudo-terminal), which on a
// busy machine takes seconds each: these are deadlines for a hang, not expectations of speed.
const SHELL_DEADLINE = 60_000;
const TEST_DEADLINE = 180_000;

const installed = (shell: Shell) => spawnSync(shell, ['-c', 'exit 0'], { stdio: 'ignore' }).status === 0;

const sink = { write: () => true } as never;
const program = buildProgram({ stdout: sink, stderr: sink, stdin: sink, env: {}, stdoutIsTTY: false, stderrIsTTY: false, stdinIsTTY: false }, { exitCode: 0 });
// Help topics (`sgq help formats`) are hidden commands, never offered.
const TOPICS = new Set(HELP_TOPICS.map((t) => t.name));
const TOP = program.commands.map((c) => c.name()).filter((n) => !TOPICS.has(n)).sort();
const sorted = (words: readonly string[]) => [...words].sort();

let work: string;
let env: Record<string, string>;

beforeAll(() => {
  work = tempDir('sgq-completion-');
  const bin = join(work, 'bin');
  const config = join(work, 'config');
  execFileSync('mkdir', ['-p', bin, config, join(work, 'home')]);
  // `sgq` on PATH is the built binary, as after `npm install -g`.
  writeFileSync(join(bin, 'sgq'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} "$@"\n`);
  chmodSync(join(bin, 'sgq'), 0o755);
  writeFileSync(join(work, 'report.ndjson'), '');
  env = {
    PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    HOME: join(work, 'home'),
    XDG_CONFIG_HOME: join(work, 'home', '.config'),
    XDG_DATA_HOME: join(work, 'home', '.local', 'share'),
    XDG_CACHE_HOME: join(work, 'home', '.cache'),
    TERM: 'xterm',
    LANG: 'C.UTF-8',
    SGQ_CONFIG_DIR: config,
  };
  for (const profile of ['work', 'personal']) {
    execFileSync(process.execPath, [BIN, 'config', 'set', 'base-url', 'http://x', '--profile', profile], { env: { ...process.env, SGQ_CONFIG_DIR: config }, stdio: 'ignore' });
  }
});

// ---- bash ----

const BASH_DRIVER = `
source "$1" || exit 3
spec=$(complete -p sgq) || { echo 'the script registered no completion for sgq' >&2; exit 4; }
fn=\${spec#*-F }
fn=\${fn%% *}
COMP_LINE=$2
COMP_POINT=\${#COMP_LINE}
shift 2
COMP_WORDS=("$@")
COMP_CWORD=$(( \${#COMP_WORDS[@]} - 1 ))
COMP_TYPE=9
COMP_KEY=9
COMPREPLY=()
"$fn" sgq "\${COMP_WORDS[COMP_CWORD]}" "\${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\\n' "\${COMPREPLY[@]}"
`;

/** The words bash hands the function for `line`: split at blanks and, by default, around `=`. */
function bashWords(line: string, splitEquals: boolean): string[] {
  const words = line.split(/ +/);
  // A trailing blank leaves an empty word to complete; `--output=` leaves "=" as that word.
  return splitEquals ? words.flatMap((w, i) => (w === '' && i === words.length - 1 ? [''] : w.split(/(=)/).filter((p) => p !== ''))) : words;
}

/** Runs a shell in the test's clean environment and folder; the deadline only stops a hung shell. */
const runShell = (shell: string, args: string[], extraEnv: Record<string, string> = {}) =>
  execa(shell, args, { env: { ...env, ...extraEnv }, extendEnv: false, cwd: work, reject: false, timeout: SHELL_DEADLINE });

async function completeBash(line: string, splitEquals = true): Promise<string[]> {
  const words = bashWords(line, splitEquals);
  const r = await runShell('bash', ['--norc', '--noprofile', '-c', BASH_DRIVER, 'bash', join(COMPLETIONS, 'sgq.bash'), line, ...words]);
  expect(r.stderr, `bash stderr for ${JSON.stringify(line)}`).toBe('');
  expect(r.exitCode).toBe(0);
  return r.stdout.split('\n').filter((w) => w !== '');
}

// ---- zsh ----

const ZSH_INIT = `
PROMPT='> '
RPROMPT=
[[ -n $SGQ_TEST_FPATH ]] && fpath=("$SGQ_TEST_FPATH" $fpath)
autoload -U compinit
# A dump per setup, made by the first shell and read by the others: a full scan of $fpath
# costs each shell a second or more on a busy machine.
compinit -u -d "$SGQ_TEST_DUMP"
[[ -n $SGQ_TEST_SOURCE ]] && source "$SGQ_TEST_SOURCE"
zstyle ':completion:*' list-grouped false
zstyle ':completion:*' insert-tab false
LISTMAX=100000
__sgq_test_done() { print -r -- "__SGQ_""DONE__" }
# Print every match offered, after compadd's own matching against the word on the line.
compadd() {
  if [[ \${@[1,(i)(-|--)]} == *-(O|A|D)\\ * ]]; then
    builtin compadd "$@"
    return
  fi
  local -a __sgq_hits
  builtin compadd -O __sgq_hits "$@"
  local __sgq_hit
  for __sgq_hit in $__sgq_hits; do print -r -- "__SGQ_MATCH__:$__sgq_hit"; done
  # What the list shows for them (_describe passes "value  -- description" as -d ARRAY).
  local -i __sgq_at=\${@[(i)-d]}
  if (( __sgq_at < $# )); then
    local __sgq_shown
    for __sgq_shown in \${(P)@[__sgq_at+1]}; do print -r -- "__SGQ_SHOWN__:$__sgq_shown"; done
  fi
  builtin compadd "$@"
}
__sgq_test_complete() { comppostfuncs=(__sgq_test_done); _main_complete "$@" }
zle -C sgq-test-complete complete-word __sgq_test_complete
bindkey '^I' sgq-test-complete
print -r -- "__SGQ_""READY__"
`;

const ZSH_DRIVER = `
zmodload zsh/zpty || exit 3
zpty sgqtest zsh -f -i
zpty -w sgqtest "source \${(q)1}"
local out
zpty -r sgqtest out '*__SGQ_READY__*' || exit 4
zpty -w -n sgqtest "$2"$'\\t'
zpty -r sgqtest out '*__SGQ_DONE__*' || exit 5
print -r -- "$out"
zpty -d sgqtest
`;

async function completeZsh(line: string, mode: 'fpath' | 'source' = 'fpath'): Promise<string[]> {
  return (await zshOutput(line, mode)).matches;
}

async function zshOutput(line: string, mode: 'fpath' | 'source' = 'fpath'): Promise<{ matches: string[]; shown: string[] }> {
  const init = join(work, 'init.zsh');
  writeFileSync(init, ZSH_INIT);
  const dump = { SGQ_TEST_DUMP: join(work, `zcompdump-${mode}`) };
  const r = await runShell('zsh', ['-f', '-c', ZSH_DRIVER, 'zsh', init, line], mode === 'fpath' ? { ...dump, SGQ_TEST_FPATH: COMPLETIONS } : { ...dump, SGQ_TEST_SOURCE: join(COMPLETIONS, '_sgq') });
  expect(r.exitCode, `zsh driver for ${JSON.stringify(line)}: ${r.stderr}`).toBe(0);
  // A broken spec makes _arguments or a function of the script complain on the terminal.
  expect(r.stdout).not.toMatch(/_arguments:|_describe:|command not found|\b_sgq\w*:\d+:/);
  const all = (tag: string) => [...new Set([...r.stdout.matchAll(new RegExp(`__SGQ_${tag}__:([^\\r\\n]*)`, 'g'))].map((m) => m[1]!))];
  return { matches: all('MATCH'), shown: all('SHOWN') };
}

// ---- fish ----

/** What fish offers for `line`: [candidate, description] pairs. */
async function fishCandidates(line: string): Promise<[string, string | undefined][]> {
  const r = await runShell('fish', ['--no-config', '-c', 'source $argv[1]; and complete -C $argv[2]', join(COMPLETIONS, 'sgq.fish'), line]);
  expect(r.stderr, `fish stderr for ${JSON.stringify(line)}`).toBe('');
  expect(r.exitCode).toBe(0);
  return r.stdout.split('\n').filter((l) => l !== '').map((l) => l.split('\t') as [string, string | undefined]);
}

const completeFish = async (line: string): Promise<string[]> => (await fishCandidates(line)).map(([word]) => word);

const COMPLETE: Record<Shell, (line: string) => Promise<string[]>> = { bash: completeBash, zsh: completeZsh, fish: completeFish };

// ---- the same expectations in every shell ----

for (const shell of ['bash', 'zsh', 'fish'] as const) {
  const available = installed(shell);
  // Locally a missing shell skips its tests; in CI (.ci/run installs all three) it fails them.
  describe.skipIf(!available && !process.env.CI)(`${shell} completion`, { timeout: TEST_DEADLINE }, () => {
    const complete = (line: string) => COMPLETE[shell](line);

    it(`${shell} is installed`, () => {
      expect(available, `${shell} is not installed; CI must install bash, zsh and fish`).toBe(true);
    });

    it('completes the commands, a prefix, and the verbs of a namespace', async () => {
      expect(sorted(await complete('sgq '))).toEqual(TOP);
      expect(await complete('sgq gr')).toEqual(['graph']);
      expect(sorted(await complete('sgq graph '))).toEqual(['followers', 'following']);
      expect(sorted(await complete('sgq metadata lat'))).toEqual(['latest', 'latest-tweets']);
      expect(sorted(await complete('sgq metadata current-f'))).toEqual(['current-followers', 'current-following']);
      expect(await complete('sgq alpha cl')).toEqual(['classification']);
      expect(sorted(await complete('sgq config '))).toEqual(['get', 'list', 'path', 'set', 'unset']);
    });

    it('completes the values of -o, --output and other choices', async () => {
      expect(sorted(await complete('sgq graph followers -o '))).toEqual(sorted(FORMATS));
      expect(sorted(await complete('sgq graph followers jack --output '))).toEqual(sorted(FORMATS));
      const inline = (await complete('sgq graph followers --output=')).map((w) => w.replace(/^--output=/, ''));
      expect(sorted(inline)).toEqual(sorted(FORMATS));
      expect(await complete('sgq info -o nd')).toEqual(['ndjson']);
      expect(sorted(await complete('sgq metadata tweets jack --summary '))).toEqual(['json', 'text']);
      expect(sorted(await complete('sgq sandbox --malformed '))).toEqual(sorted([...MALFORMED_KINDS]));
      expect(sorted(await complete('sgq sandbox --shape '))).toEqual(['service', 'spec']);
    });

    it('completes the flags of the command on the line, and the global ones', async () => {
      expect(await complete('sgq graph followers --al')).toEqual(['--all']);
      expect(sorted(await complete('sgq graph following --si'))).toEqual(['--since', '--since-last']);
      expect(await complete('sgq graph followers jack -o json --sum')).toEqual(['--summary']);
      const flags = await complete('sgq graph followers --');
      for (const flag of ['--all', '--output', '--max-pages', '--profile', '--base-url', '--help']) expect(flags).toContain(flag);
      expect(flags).not.toContain('--port');
      // lists latest-tweets is not paginated and has no --since, unlike its namesake in metadata.
      const lists = await complete('sgq lists latest-tweets --');
      expect(lists).toContain('--output');
      expect(lists).not.toContain('--all');
      expect(lists).not.toContain('--since');
    });

    it('offers --version for sgq alone, not for a subcommand', async () => {
      expect(sorted(await complete('sgq --ver'))).toEqual(['--verbose', '--version']);
      expect(await complete('sgq graph followers --ver')).toEqual(['--verbose']);
      expect(await complete('sgq config list --ver')).toEqual(['--verbose']);
      expect(sorted(await complete('sgq config list -o '))).toEqual(['json', 'text']);
    });

    it('completes the profile names from the config store when TAB is pressed', async () => {
      expect(sorted(await complete('sgq --profile '))).toEqual(['personal', 'work']);
      expect(await complete('sgq graph followers jack --profile w')).toEqual(['work']);
      // A global flag and its value before the command do not hide the command.
      expect(sorted(await complete('sgq -q --profile work graph fo'))).toEqual(['followers', 'following']);
    });

    it('completes setting names for config set|get|unset, and the shells for completion', async () => {
      expect(sorted(await complete('sgq config set '))).toEqual(sorted(SETTING_NAMES));
      expect(await complete('sgq config get base')).toEqual(['base-url']);
      expect(await complete('sgq config unset ret')).toEqual(['retries']);
      expect(await complete('sgq config set api-key ')).toEqual([]);
      expect(sorted(await complete('sgq completion '))).toEqual(['bash', 'fish', 'zsh']);
    });

    it('completes file names for --out, and only where a file is expected', async () => {
      expect(await complete('sgq graph followers jack --out repo')).toEqual(['report.ndjson']);
      // A shell's fallback would offer the file here; the script must not. (fish, finding no
      // value that starts with "repo", may offer formats whose descriptions hold r…e…p…o.)
      const output = await complete('sgq graph followers jack --output repo');
      expect(output).not.toContain('report.ndjson');
      for (const word of output) expect(FORMATS).toContain(word);
      expect(await complete('sgq graph followers repo')).toEqual([]);
    });
  });
}

describe.skipIf(!installed('bash') && !process.env.CI)('bash specifics', { timeout: TEST_DEADLINE }, () => {
  it('copes with --output=VALUE when = is not a word break', async () => {
    expect(await completeBash('sgq graph followers --output=nd', false)).toEqual(['--output=ndjson']);
  });

  it('treats every word after -- as an argument', async () => {
    expect(await completeBash('sgq graph followers -- --al')).toEqual([]);
  });
});

describe.skipIf(!installed('fish') && !process.env.CI)('fish specifics', { timeout: TEST_DEADLINE }, () => {
  it('describes each value on its own: formats, settings, shells', async () => {
    const formats = new Map(await fishCandidates('sgq graph followers -o '));
    expect(Object.fromEntries(formats)).toEqual(FORMAT_DESCRIPTIONS);
    const settings = new Map(await fishCandidates('sgq config set '));
    expect([...settings.keys()].sort()).toEqual(sorted(SETTING_NAMES));
    expect(settings.get('base-url')).toBe('service address, may carry a path prefix');
    expect(new Set(settings.values()).size).toBe(SETTING_NAMES.length);
    for (const description of settings.values()) expect(description).not.toMatch(/^\(?key\)?$/);
    const shells = new Map(await fishCandidates('sgq completion '));
    expect(new Set(shells.values()).size).toBe(3);
    // A flag still says what the flag does.
    expect(new Map(await fishCandidates('sgq graph followers --outp')).get('--output')).toMatch(/^table, json/);
  });
});

describe.skipIf(!installed('zsh') && !process.env.CI)('zsh specifics', { timeout: TEST_DEADLINE }, () => {
  it('shows what each value is, as fish does', async () => {
    const { matches, shown } = await zshOutput('sgq config set ');
    expect(sorted(matches)).toEqual(sorted(SETTING_NAMES));
    expect(shown).toContainEqual(expect.stringMatching(/^base-url +-- service address, may carry a path prefix$/));
    const formats = await zshOutput('sgq graph followers -o ');
    // zsh cuts a description at the terminal's width (80 columns here).
    expect(formats.shown).toContainEqual(expect.stringMatching(new RegExp(`^json +-- ${FORMAT_DESCRIPTIONS.json}$`)));
    expect(formats.shown).toContainEqual(expect.stringMatching(/^ndjson +-- one JSON record a line, /));
    expect(formats.shown).toHaveLength(FORMATS.length);
  });

  it('works sourced after compinit, as well as autoloaded from $fpath', async () => {
    expect(await completeZsh('sgq gr', 'source')).toEqual(['graph']);
    expect(sorted(await completeZsh('sgq graph followers -o ', 'source'))).toEqual(sorted(FORMATS));
    expect(sorted(await completeZsh('sgq --profile ', 'source'))).toEqual(['personal', 'work']);
  });
});
