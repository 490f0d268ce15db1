import { execa, execaSync } from 'execa';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, sgq, useSandboxProcess } from '../helpers/e2e.js';
import { tempDir } from '../helpers/run.js';
import { until } from '../helpers/wait.js';

// A real terminal: tmux on a server of its own, each run in a window of a given size.
// The spec's two-field records: these tests are about the terminal, the pager and fitting the
// width; sandbox-shapes.test.ts runs the table over the service's records too.
const sb = useSandboxProcess(['--shape', 'spec']);
const socket = `sgq-test-${process.pid}`;
const tmux = (...args: string[]) => execa('tmux', ['-L', socket, '-f', '/dev/null', ...args], { reject: false });
afterAll(() => {
  execaSync('tmux', ['-L', socket, 'kill-server'], { reject: false });
});

const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
let sessions = 0;

/** Starts sgq in a terminal of `width` x `height`; the pane stays open after it ends, with its exit code. */
async function inTerminal(width: number, height: number, args: string[], env: Record<string, string> = {}) {
  const name = `s${++sessions}`;
  const vars = Object.entries({ ...sb.env(), SGQ_CONFIG_DIR: tempDir(), NO_COLOR: '1', ...env }).map(([k, v]) => `${k}=${quote(v)}`);
  const command = `env ${vars.join(' ')} ${quote(process.execPath)} ${quote(BIN)} ${args.map(quote).join(' ')}; echo "__EXIT $?"; exec cat`;
  const started = await tmux('new-session', '-d', '-s', name, '-x', String(width), '-y', String(height), command);
  expect(started.exitCode, started.stderr).toBe(0);
  const screen = async () => (await tmux('capture-pane', '-p', '-t', name)).stdout;
  return {
    screen,
    keys: (...keys: string[]) => tmux('send-keys', '-t', name, ...keys),
    /** The screen once sgq has ended, and its exit code. */
    async ended(): Promise<{ lines: string[]; code: number }> {
      await until(async () => /__EXIT \d+/.test(await screen()), 'sgq to end in tmux', 30_000);
      const text = await screen();
      const code = Number(/__EXIT (\d+)/.exec(text)![1]);
      return { lines: text.split('\n').slice(0, text.split('\n').findIndex((l) => l.startsWith('__EXIT'))), code };
    },
  };
}

describe('-o table in a real terminal', () => {
  const args = ['graph', 'followers', 'jack', '--limit', '5', '--no-pager', '--quiet'];

  it.each([40, 80, 200])('fits %i columns: one line per record, no rules, long cells cut with …', async (width) => {
    const records = (await sgq(['graph', 'followers', 'jack', '--limit', '5'], { env: sb.env() })).stdout.split('\n').map((l) => JSON.parse(l) as Record<string, string>);
    const run = await inTerminal(width, 40, args);
    const { lines, code } = await run.ended();
    expect(code).toBe(0);
    expect(lines).toHaveLength(6);
    for (const line of lines) expect([...line].length).toBeLessThanOrEqual(width);
    expect(lines[0]).toMatch(/^username\s+last_checked/);
    records.forEach((record, i) => {
      const line = lines[i + 1]!;
      expect(line.startsWith(`${record.username}  `)).toBe(true);
      const shown = line.slice(line.lastIndexOf('  ') + 2);
      if (width >= 80) expect(shown).toBe(record.last_checked);
      else expect(shown).toBe(`${record.last_checked!.slice(0, shown.length - 1)}…`);
    });
  });

  it('long output goes through the pager (less -FRX) and ends when it is quit; --no-pager prints it all', async () => {
    const run = await inTerminal(80, 20, ['graph', 'followers', 'big_1200', '--all', '--quiet']);
    // less shows the first screen and waits at its prompt; sgq has not ended.
    await until(async () => /^username\s+last_checked$/m.test(await run.screen()), 'the first screen in the pager', 30_000);
    await until(async () => /^:\s*$/m.test(await run.screen()), "less's prompt", 30_000);
    expect(await run.screen()).not.toContain('__EXIT');
    await run.keys('q');
    const { code } = await run.ended();
    expect(code).toBe(0);

    const direct = await inTerminal(80, 20, ['graph', 'followers', 'big_10', '--all', '--quiet']);
    const short = await direct.ended();
    // less -F quits by itself when the output fits one screen.
    expect(short.code).toBe(0);
    expect(short.lines).toHaveLength(11);
  }, 60_000);

  it('SGQ_PAGER before PAGER; no pager with --no-pager, in a pipe, or for a file', async () => {
    const dir = tempDir();
    const pager = join(dir, 'pager.sh');
    writeFileSync(pager, `#!/bin/sh\necho "LESS=$LESS" > "$0.env"\ncat > "$0.out"\n`);
    chmodSync(pager, 0o755);
    const run = await inTerminal(80, 20, ['graph', 'followers', 'big_1200', '--all', '--quiet'], { SGQ_PAGER: pager, PAGER: 'false' });
    expect((await run.ended()).code).toBe(0);
    const paged = readFileSync(`${pager}.out`, 'utf8').split('\n');
    expect(paged[0]).toMatch(/^username\s+last_checked$/);
    expect(paged).toHaveLength(1202);
    expect(readFileSync(`${pager}.env`, 'utf8')).toBe('LESS=FRX\n');

    const other = join(dir, 'other.sh');
    writeFileSync(other, `#!/bin/sh\ncat > "$0.out"\n`);
    chmodSync(other, 0o755);
    const off = await inTerminal(80, 20, ['graph', 'followers', 'big_10', '--all', '--quiet', '--no-pager'], { SGQ_PAGER: other });
    expect((await off.ended()).lines).toHaveLength(11);
    const file = join(dir, 'out.txt');
    const toFile = await inTerminal(80, 20, ['graph', 'followers', 'big_10', '--all', '--quiet', '-o', 'table', '--out', file], { SGQ_PAGER: other });
    expect((await toFile.ended()).code).toBe(0);
    expect(readFileSync(file, 'utf8').split('\n')).toHaveLength(12);
    const piped = await sgq(['graph', 'followers', 'big_10', '--all', '-o', 'table'], { env: { ...sb.env(), SGQ_PAGER: other } });
    expect(piped.stdout.split('\n')).toHaveLength(11);
    expect(existsSync(`${other}.out`)).toBe(false);
  });
});

describe('help in a real terminal', () => {
  // Into a pipe, help is a file rendered at 80 columns (dist/help); at a terminal, Commander
  // renders it to the terminal's width.
  it.each([60, 140])('fits %i columns', async (width) => {
    const { lines, code } = await (await inTerminal(width, 100, ['--help'])).ended();
    expect(code).toBe(0);
    expect(lines[0]).toBe('Usage: sgq [options] [command]');
    const longest = Math.max(...lines.map((line) => [...line].length));
    expect(longest).toBeLessThanOrEqual(width);
    if (width > 80) expect(longest).toBeGreaterThan(80);
  });
});
