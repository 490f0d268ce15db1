import { execaSync } from 'execa';
import { describe, expect, it } from 'vitest';
import { BIN } from '../helpers/e2e.js';
import { tempDir } from '../helpers/run.js';
import { shellQuote, useTmux } from '../helpers/tmux.js';
import { until } from '../helpers/wait.js';

// Help and usage errors in a real terminal: tmux on a server of its own, a window of 80 and
// of 200 columns. tmux marks a line the terminal wrapped; `capture-pane -J` joins those, so a
// capture with and without -J differ exactly when something was too wide for the terminal.

const tmux = useTmux('help');

const installed = execaSync('tmux', ['-V'], { reject: false }).exitCode === 0;
const quote = shellQuote;
let sessions = 0;

/** Runs sgq in a terminal `width` wide; resolves to the whole screen and history once it ends. */
async function inTerminal(width: number, args: string[]): Promise<{ plain: string; joined: string; code: number }> {
  const name = `h${++sessions}`;
  const env = `env SGQ_CONFIG_DIR=${quote(tempDir())} NO_COLOR=1`;
  const command = `${env} ${quote(process.execPath)} ${quote(BIN)} ${args.map(quote).join(' ')}; echo "__EXIT $?"; exec cat`;
  const started = await tmux('new-session', '-d', '-s', name, '-x', String(width), '-y', '50', command);
  expect(started.exitCode, started.stderr).toBe(0);
  const capture = async (...flags: string[]) => (await tmux('capture-pane', '-p', '-S', '-', '-E', '-', ...flags, '-t', name)).stdout;
  await until(async () => /__EXIT \d+/.test(await capture()), 'sgq to end in tmux', 30_000);
  const [plain, joined] = [await capture(), await capture('-J')];
  const cut = (text: string) => text.slice(0, text.indexOf('__EXIT')).replace(/\s+$/, '');
  return { plain: cut(plain), joined: cut(joined), code: Number(/__EXIT (\d+)/.exec(plain)![1]) };
}

describe.skipIf(!installed && !process.env.CI)('help and usage errors in a real terminal', { timeout: 120_000 }, () => {
  it.each([80, 200])('at %i columns: the help of a subcommand and of api, inherited options, no line wrapped by the terminal', async (width) => {
    for (const args of [['graph', 'followers', '--help'], ['api', '--help'], ['help', 'environment']]) {
      const { plain, joined, code } = await inTerminal(width, args);
      expect(code).toBe(0);
      expect(plain, args.join(' ')).toBe(joined);
      for (const line of plain.split('\n')) expect(line.length).toBeLessThanOrEqual(width);
      if (args[0] !== 'help') expect(plain).toMatch(/^Inherited options:\n {2}--profile <name> /m);
    }
    const api = await inTerminal(width, ['api', '--help']);
    const example = 'sgq api metadata/get_tweets -f user=jack -f how=username -F page=1 --paginate --limit 100';
    if (width === 200) expect(api.plain.split('\n')).toContain(`  $ ${example}`);
    else expect(api.plain).toMatch(/ -F page=1 \\\n {6}--paginate --limit 100$/m);
  });

  it.each([80, 200])('at %i columns: a usage error is one line naming the help of the command typed', async (width) => {
    const { plain, code } = await inTerminal(width, ['graph', 'followers', 'jack', '--bogus']);
    expect(code).toBe(2);
    const line = "sgq: unknown option '--bogus'; see `sgq graph followers --help`";
    // One line of text: at 80 columns it is short enough not to wrap either.
    expect(plain.trim()).toBe(line);
  });
});
