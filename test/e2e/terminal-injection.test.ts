import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { BIN } from '../helpers/e2e.js';
import { tempDir } from '../helpers/run.js';
import { shellQuote, useTmux } from '../helpers/tmux.js';
import { envelope, useStubs } from '../helpers/stub-server.js';
import { until } from '../helpers/wait.js';

// Text the service controls, in a real terminal (issue 34): tmux windows of a given size, sgq
// run under script(1), which keeps every byte written to the terminal. Whatever the service
// writes must neither set the window title (OSC 0), write the clipboard (OSC 52), clear the
// screen (CSI 2J), nor forge a line of sgq's own; into a pipe or a file the data stays exact.

const stubs = useStubs();
const tmux = useTmux('inject');
const quote = shellQuote;
let sessions = 0;

const HOSTILE = 'x\u001b]52;c;aGFja2Vk\u0007\u001b]0;pwned\u0007\u001b[2J\rsgq: done\nsgq: done\u009b31m\u202eevil';
const SHOWN = 'x\\u{1b}]52;c;aGFja2Vk\\u{7}\\u{1b}]0;pwned\\u{7}\\u{1b}[2J\\rsgq: done\\nsgq: done\\u{9b}31m\\u{202e}evil';
/** What the terminal must never receive from the service's text. */
const OBEYED = ['\u001b]52;', '\u001b]0;pwned', '\u001b[2J', '\rsgq: done', '\nsgq: done', '\u00c2\u009b31m', '\u202e'];

/** Runs sgq in a terminal of 100 x 30 under script(1); the log holds every byte it wrote. */
async function inTerminal(args: string[], env: Record<string, string>) {
  const name = `i${++sessions}`;
  const log = join(tempDir(), 'typescript');
  const vars = Object.entries({ SGQ_CONFIG_DIR: tempDir(), NO_COLOR: '1', ...env }).map(([k, v]) => `${k}=${quote(v)}`);
  const run = `env ${vars.join(' ')} ${quote(process.execPath)} ${quote(BIN)} ${args.map(quote).join(' ')}`;
  const started = await tmux('new-session', '-d', '-s', name, '-x', '100', '-y', '30', `script -q -e -c ${quote(run)} ${quote(log)}; echo "__EXIT $?"; exec cat`);
  expect(started.exitCode, started.stderr).toBe(0);
  const screen = async () => (await tmux('capture-pane', '-p', '-t', name)).stdout;
  await until(async () => /__EXIT \d+/.test(await screen()), 'sgq to end in tmux', 30_000);
  const text = await screen();
  return {
    code: Number(/__EXIT (\d+)/.exec(text)![1]),
    lines: text.split('\n'),
    title: (await tmux('display', '-p', '-t', name, '#{pane_title}')).stdout.trim(),
    // As bytes (latin1), so that C1's two UTF-8 bytes can be looked for too.
    bytes: readFileSync(log).toString('latin1'),
    text: readFileSync(log, 'utf8'),
  };
}

/** `linesKept`: --jq prints a raw string's line breaks as they are (jq -r does). */
function expectNothingObeyed(run: Awaited<ReturnType<typeof inTerminal>>, linesKept = false): void {
  for (const sequence of OBEYED.filter((s) => !linesKept || s !== '\nsgq: done')) expect(run.bytes.includes(Buffer.from(sequence, 'utf8').toString('latin1')), JSON.stringify(sequence)).toBe(false);
  expect(run.title).not.toBe('pwned');
  expect(run.lines.filter((line) => line.trim() === 'sgq: done')).toEqual([]);
}

const env = (url: string) => ({ SGQ_BASE_URL: url, SGQ_API_KEY: 'k' });

describe('the service\'s text on a terminal\'s stderr', () => {
  it('an error record is shown escaped: no title, no clipboard, no cleared screen, no forged line', async () => {
    const stub = await stubs(() => ({ body: { data: [{ error: HOSTILE }], current_credits: 10 } }));
    const run = await inTerminal(['graph', 'followers', 'jack', '--no-pager'], env(stub.url));
    expect(run.code).toBe(4);
    expectNothingObeyed(run);
    expect(run.text).toContain(`sgq: jack: the service answered: ${SHOWN}`);
  });

  it('a 401 message, through the top-level printer', async () => {
    const stub = await stubs(() => ({ status: 401, body: { message: HOSTILE.replace('\n', ' ') } }));
    const run = await inTerminal(['credits', '--refresh'], env(stub.url));
    expect(run.code).toBe(3);
    expectNothingObeyed(run);
    expect(run.text).toContain(SHOWN.replace('\\n', ' '));
  });

  it('stderr into a file (a cron log) is escaped too', async () => {
    const stub = await stubs(() => ({ body: { data: [{ error: HOSTILE }], current_credits: 10 } }));
    const log = join(tempDir(), 'sgq.log');
    const r = await execa('sh', ['-c', `${quote(process.execPath)} ${quote(BIN)} graph followers jack 2>> ${quote(log)}`], { env: { ...env(stub.url), SGQ_CONFIG_DIR: tempDir() }, reject: false });
    expect(r.exitCode).toBe(4);
    expect(readFileSync(log, 'utf8')).toBe(`sgq: jack: the service answered: ${SHOWN}\n`);
  });
});

describe('records on a terminal are escaped; into a pipe they are exact', () => {
  const record = { username: HOSTILE, bio: 'plain' };
  const cases: [string[], string, string][] = [
    [['-o', 'csv'], `"${SHOWN}",plain`, `username,bio\r\n"${HOSTILE}",plain\r\n`],
    [['-o', 'tsv'], `${SHOWN}\tplain`, `username\tbio\n${HOSTILE.replace('\r', '\\r').replace('\n', '\\n')}\tplain\n`],
    // Answered by sgq itself, and by jq.
    [['--jq', '.username'], SHOWN.replace('\\n', '\n'), `${HOSTILE}\n`],
    [['--jq', '.username | ascii_downcase'], SHOWN.replace('\\n', '\n').toLowerCase(), `${HOSTILE.toLowerCase()}\n`],
  ];

  it.each(cases)('%j', async (args, onTerminal, intoPipe) => {
    const stub = await stubs(() => ({ body: envelope(1, null, [record]) }));
    const run = await inTerminal(['graph', 'followers', 'jack', '--quiet', '--no-pager', ...args], env(stub.url));
    expect(run.code).toBe(0);
    expectNothingObeyed(run, args[0] === '--jq');
    // The terminal writes each line feed as CR LF.
    expect(run.text.replaceAll('\r\n', '\n')).toContain(onTerminal);
    const piped = await execa(process.execPath, [BIN, 'graph', 'followers', 'jack', '--quiet', ...args], {
      env: { ...env(stub.url), SGQ_CONFIG_DIR: tempDir() },
      reject: false,
      stripFinalNewline: false,
      encoding: 'buffer',
    });
    expect(piped.exitCode).toBe(0);
    expect(Buffer.from(piped.stdout).equals(Buffer.from(intoPipe, 'utf8'))).toBe(true);
  });
});
