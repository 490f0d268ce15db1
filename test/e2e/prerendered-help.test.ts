import { execa } from 'execa';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { helpFileName } from '../../src/cli/start/prerendered-help.js';
import { BIN, sgq } from '../helpers/e2e.js';
import { runSgq } from '../helpers/run.js';

// `sgq … --help` into a pipe prints dist/help/*.txt (scripts/build.mjs) instead of running
// Commander. It must print exactly what Commander prints, for every command.

const HELP_DIR = fileURLToPath(new URL('../../dist/help/', import.meta.url));

async function commandPaths(): Promise<string[][]> {
  const described = JSON.parse((await runSgq(['describe', '--json'])).stdout) as { commands: { name: string; commands?: unknown[] }[] };
  const walk = (commands: { name: string; commands?: unknown[] }[]): string[][] =>
    commands.flatMap((c) => [c.name.split(' '), ...walk((c.commands ?? []) as { name: string }[])]);
  return [[], ...walk(described.commands)];
}

describe('pre-rendered help', () => {
  it('has a file for every command and none for a command that is gone', async () => {
    const expected = (await commandPaths()).map((path) => helpFileName([...path, '--help'])).sort();
    expect(readdirSync(HELP_DIR).sort()).toEqual(expected);
  });

  it('prints, for every command, what Commander prints into a pipe (from this source, not the build)', async () => {
    for (const path of await commandPaths()) {
      const live = await runSgq([...path, '--help']);
      expect(live.code).toBe(0);
      expect(readFileSync(`${HELP_DIR}${helpFileName([...path, '--help'])}`, 'utf8'), path.join(' ')).toBe(live.stdout);
    }
  });

  it('is what the program prints for --help and -h, with exit 0 and nothing on stderr', async () => {
    for (const args of [['--help'], ['-h'], ['graph', 'followers', '--help'], ['config', 'set', '-h'], ['snapshots', 'prune', '--help']]) {
      const [real, live] = await Promise.all([sgq(args), runSgq(args)]);
      expect([real.exitCode, real.stderr, real.stdout + '\n'], args.join(' ')).toEqual([0, '', live.stdout]);
    }
  });

  it('leaves anything else to the program: unknown commands, options and values before --help', async () => {
    for (const args of [['nope', '--help'], ['graph', 'nope', '--help'], ['graph', 'followers', 'jack', '--help'], ['--profile', 'work', 'graph', '--help'], ['help', 'graph']]) {
      const [real, live] = await Promise.all([sgq(args), runSgq(args)]);
      expect([real.exitCode, real.stdout + (real.stdout ? '\n' : '')], args.join(' ')).toEqual([live.code, live.stdout]);
    }
  });

  it('names only plain commands: no option, value, path or empty word becomes a file name', () => {
    expect(helpFileName(['--help'])).toBe('sgq.txt');
    expect(helpFileName(['graph', 'followers', '-h'])).toBe('sgq+graph+followers.txt');
    for (const argv of [[], ['graph'], ['graph', '--help', 'x'], ['../../etc', '--help'], ['Graph', '--help'], ['', '--help'], ['--quiet', '--help'], ['a/b', '--help']]) {
      expect(helpFileName(argv), argv.join(' ')).toBeUndefined();
    }
  });

  it('survives a pipe closed after the first bytes', async () => {
    const r = await execa('bash', ['-c', `"${process.execPath}" "${BIN}" graph followers --help | head -c 5; echo " \${PIPESTATUS[0]}"`], { reject: false });
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('Usage 0');
  });
});
