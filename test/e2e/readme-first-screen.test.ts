import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import stringWidth from 'string-width';
import { describe, expect, it } from 'vitest';
import { BIN, sgq, useSandboxProcess } from '../helpers/e2e.js';
import { tempDir } from '../helpers/run.js';
import { shellQuote, useTmux } from '../helpers/tmux.js';
import { until } from '../helpers/wait.js';

// The README's first example shows what a person sees: `sgq graph followers jack` in an
// 80-column terminal, through the pager, against the sandbox (the service's record shape).
const sb = useSandboxProcess();
const tmux = useTmux('readme');
const README = readFileSync(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8');

/** The lines printed under `$ COMMAND` in the README's first console block that runs it. */
function readmeOutput(command: string): string[] {
  const block = README.split('```console\n').slice(1).map((b) => b.slice(0, b.indexOf('```'))).find((b) => b.startsWith(`$ ${command}\n`));
  if (!block) throw new Error(`no console block of \`${command}\` in the README`);
  return block.split('\n').slice(1, -1);
}

let sessions = 0;
async function inTerminal(width: number, height: number, args: string[]) {
  const name = `r${++sessions}`;
  // A person's terminal speaks UTF-8: so does less, whatever the locale the tests run under (env -i has none).
  const vars = Object.entries({ ...sb.env(), SGQ_CONFIG_DIR: tempDir(), NO_COLOR: '1', LESSCHARSET: 'utf-8' }).map(([k, v]) => `${k}=${shellQuote(v)}`);
  // No PAGER, LESS or SGQ_PAGER: the pager a new user gets, less -FRX.
  const run = `env -u PAGER -u LESS -u SGQ_PAGER ${vars.join(' ')} ${shellQuote(process.execPath)} ${shellQuote(BIN)} ${args.map(shellQuote).join(' ')}`;
  const started = await tmux('new-session', '-d', '-s', name, '-x', String(width), '-y', String(height), `${run}; echo "__EXIT $?"; exec cat`);
  expect(started.exitCode, started.stderr).toBe(0);
  const screen = async () => (await tmux('capture-pane', '-p', '-t', name)).stdout;
  return { screen, keys: (...keys: string[]) => tmux('send-keys', '-t', name, ...keys) };
}

describe('the README\'s first example', () => {
  it('is the first screen of `sgq graph followers jack` at 80 columns', async () => {
    const expected = readmeOutput('sgq graph followers jack');
    expect(expected.length).toBeGreaterThan(5);
    const run = await inTerminal(80, 24, ['graph', 'followers', 'jack']);
    // less shows the first screen and waits at its prompt (500 records do not fit 24 lines).
    await until(async () => /^:\s*$/m.test(await run.screen()), "less's prompt", 30_000);
    const screen = (await run.screen()).split('\n');
    expect(screen.slice(0, expected.length)).toEqual(expected);
    // Within 80 columns by Unicode's measure (tmux 3.3 draws 👍🏽 two wider: the line ends further right, it does not wrap).
    for (const line of screen) expect(stringWidth(line)).toBeLessThanOrEqual(80);
    // What sgq says waits for the pager: never on its screen (its prompt line), written once it ends.
    expect(screen.join('\n')).not.toContain('there are more pages');
    await run.keys('q');
    await until(async () => /__EXIT 0/.test(await run.screen()), 'sgq to end after q', 30_000);
    const after = (await run.screen()).split('\n');
    const note = after.findIndex((line) => line === 'sgq: there are more pages; add --all to fetch them all, or --page N for one');
    expect(note, after.join('\n')).toBeGreaterThan(expected.length);
    expect(after.findIndex((line) => line.startsWith('__EXIT 0'))).toBeGreaterThan(note);
  }, 60_000);

  it('its records are the same in a pipe: NDJSON, every field, timestamps as sent', async () => {
    const r = await sgq(['graph', 'followers', 'jack', '--limit', '2'], { env: sb.env() });
    expect(r.exitCode).toBe(0);
    const first = JSON.parse(r.stdout.split('\n')[0]!) as Record<string, unknown>;
    expect(Object.keys(first)).toHaveLength(12);
    expect(String(first.follower_creation_date)).toMatch(/T\d\d:\d\d:\d\d\.\d{6}\+00:00$/);
    const shown = readmeOutput('sgq graph followers jack');
    expect(shown[shown.findIndex((l) => l.startsWith('username ')) + 1]!.startsWith(`${String(first.follower_username)} `)).toBe(true);
  });
});

describe('a narrow terminal', () => {
  it('at 50 columns: no number cut, the columns left out said once on stderr', async () => {
    const run = await inTerminal(50, 30, ['graph', 'followers', 'jack', '--limit', '20', '--no-pager']);
    await until(async () => /__EXIT \d+/.test(await run.screen()), 'sgq to end', 30_000);
    const screen = (await run.screen()).split('\n');
    expect(screen.join('\n')).toContain('__EXIT 0');
    const notes = screen.filter((l) => /left out|no room/.test(l));
    expect(notes.length).toBeGreaterThanOrEqual(1);
    const header = screen.findIndex((l) => /^username +name/.test(l));
    expect(header).toBeGreaterThanOrEqual(0);
    for (const line of screen.slice(header + 1, header + 21)) {
      expect(stringWidth(line)).toBeLessThanOrEqual(50);
      expect(line).toMatch(/ \d+$/);
    }
  }, 60_000);
});
