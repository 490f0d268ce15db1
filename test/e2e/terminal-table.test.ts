import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, sgq, useSandboxProcess } from '../helpers/e2e.js';
import { pageJson } from '../helpers/hostile-text.js';
import { tempDir } from '../helpers/run.js';
import { shellQuote, useTmux } from '../helpers/tmux.js';
import { useStubs } from '../helpers/stub-server.js';
import { until } from '../helpers/wait.js';

// A real terminal: tmux on a server of its own, each run in a window of a given size.
// The spec's two-field records: these tests are about the terminal, the pager and fitting the
// width; sandbox-shapes.test.ts runs the table over the service's records too.
const sb = useSandboxProcess(['--shape', 'spec']);
const tmux = useTmux('test');

const quote = shellQuote;
let sessions = 0;

/**
 * Starts sgq in a terminal of `width` x `height`; the pane stays open after it ends, with its
 * exit code. With `log`, sgq runs under script(1), which keeps every byte it wrote in that file.
 */
async function inTerminal(width: number, height: number, args: string[], env: Record<string, string> = {}, log?: string) {
  const name = `s${++sessions}`;
  const vars = Object.entries({ ...sb.env(), SGQ_CONFIG_DIR: tempDir(), NO_COLOR: '1', ...env }).map(([k, v]) => `${k}=${quote(v)}`);
  const run = `env ${vars.join(' ')} ${quote(process.execPath)} ${quote(BIN)} ${args.map(quote).join(' ')}`;
  const command = `${log ? `script -q -e -c ${quote(run)} ${quote(log)}` : run}; echo "__EXIT $?"; exec cat`;
  const started = await tmux('new-session', '-d', '-s', name, '-x', String(width), '-y', String(height), command);
  expect(started.exitCode, started.stderr).toBe(0);
  const screen = async () => (await tmux('capture-pane', '-p', '-t', name)).stdout;
  return {
    screen,
    /** The screen with its colours, as SGR escapes. */
    colors: async () => (await tmux('capture-pane', '-p', '-e', '-t', name)).stdout,
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

  it.each([40, 80, 200])('fits %i columns: one line per record, no rules, timestamps as dates', async (width) => {
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
      // A date is never cut: at 40 columns as at 200.
      expect(line.slice(line.lastIndexOf('  ') + 2)).toBe(record.last_checked!.slice(0, 10));
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
  // Into a pipe, help is 80 columns wide; at a terminal, it fits the terminal's width.
  it.each([60, 140])('fits %i columns', async (width) => {
    const { lines, code } = await (await inTerminal(width, 100, ['--help'])).ended();
    expect(code).toBe(0);
    expect(lines[0]).toBe('Usage: sgq [options] [command]');
    const longest = Math.max(...lines.map((line) => [...line].length));
    expect(longest).toBeLessThanOrEqual(width);
    if (width > 80) expect(longest).toBeGreaterThan(80);
  });
});

// The terminal's own measure of text: a script in a tmux window prints each string and asks
// the terminal where its cursor is (DSR, ESC [6n). Independent of sgq's string-width.
const PROBE = String.raw`
const fs = require('node:fs');
const [inFile, outFile] = process.argv.slice(1);
const strings = JSON.parse(fs.readFileSync(inFile, 'utf8'));
process.stdin.setRawMode(true);
let buffer = '';
const widths = [];
const ask = () => {
  if (widths.length === strings.length) { fs.writeFileSync(outFile + '.tmp', JSON.stringify(widths)); fs.renameSync(outFile + '.tmp', outFile); process.exit(0); }
  process.stdout.write('\r\x1b[2K' + strings[widths.length] + '\x1b[6n');
};
process.stdin.on('data', (c) => {
  buffer += c.toString('latin1');
  const m = /\x1b\[(\d+);(\d+)R/.exec(buffer);
  if (!m) return;
  buffer = buffer.slice(m.index + m[0].length);
  widths.push(Number(m[2]) - 1);
  ask();
});
ask();`;

async function widthsInTmux(strings: string[]): Promise<number[]> {
  const dir = tempDir();
  const [input, output] = [join(dir, 'in.json'), join(dir, 'out.json')];
  writeFileSync(input, JSON.stringify(strings));
  const started = await tmux('new-session', '-d', '-s', `probe${++sessions}`, '-x', '1000', '-y', '5', `${quote(process.execPath)} -e ${quote(PROBE)} ${quote(input)} ${quote(output)}`);
  expect(started.exitCode, started.stderr).toBe(0);
  await until(() => existsSync(output), 'the terminal to measure the text', 30_000);
  return JSON.parse(readFileSync(output, 'utf8')) as number[];
}

// Names and bios in many scripts, measured alike by Unicode (string-width) and by tmux 3.3.
// (Terminals differ on skin-tone modifiers, VS16 and Indic spacing marks: see the README.)
const NAMES = ['山田太郎', '김민준', 'Zoë Ångström', 'e\u0301cole', 'Привет мир', 'שלום', 'مرحبا بالعالم', 'สวัสดี', 'ｶﾞｷﾞ half', 'ＦＵＬＬ width', 'plain_ascii'];
const BIOS = ['👨‍👩‍👧‍👦 family of four', '🇯🇵🇫🇷🇧🇷 three flags', 'a\u200bzero-width space', 'tab\there and\nnewline', 'bell\u0007 esc\u001b[31m red', '¯\\_(ツ)_/¯ shrug', '東京都渋谷区 神南一丁目 一九番一号 の 長い 住所', 'null', 'line\u2028sep \u202eoverride'];
const multilingual = NAMES.map((name, i) => ({
  follower_username: name,
  follower_userid: `${10n ** 19n + BigInt(i)}`,
  follower_list_name: i % 3 === 0 ? null : 'null',
  follower_bio: BIOS[i % BIOS.length]!,
  follower_location: NAMES[(i + 4) % NAMES.length]!,
  follower_num_followers: i * 1234,
}));
const multilingualPage = pageJson(JSON.stringify(multilingual).replace(/"follower_userid":"(\d+)"/g, '"follower_userid":$1'), multilingual.length);

/** Where each cell of a line starts (cells hold no double space and none is empty). */
const cellStarts = (line: string): number[] => [...line.matchAll(/(?:^|(?<= {2}))[^ ]/g)].map((m) => m.index);

describe('-o table of multilingual records in a real terminal', () => {
  const stubs = useStubs();
  const fields = ['--fields', 'follower_username,follower_bio,follower_location,follower_num_followers'];

  it.each([40, 60, 80, 140])('at %i columns: one line a record, every column at the same screen column by the terminal\'s measure', async (width) => {
    const stub = await stubs(() => ({ text: multilingualPage }));
    const log = join(tempDir(), 'typescript');
    const run = await inTerminal(width, 40, ['graph', 'followers', 'jack', '--no-pager', '--quiet', ...fields], { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k' }, log);
    const ended = await run.ended();
    expect(ended.code).toBe(0);
    expect(ended.lines).toHaveLength(multilingual.length + 1); // no line wrapped on the screen
    // The lines exactly as sgq wrote them (the screen's copy loses parts of ZWJ sequences).
    const typescript = readFileSync(log, 'utf8');
    const lines = typescript.slice(typescript.indexOf('\n') + 1).split('\r\n').slice(0, multilingual.length + 1);
    const starts = lines.map(cellStarts);
    for (const s of starts) expect(s).toHaveLength(4);
    const measured = await widthsInTmux([...lines, ...lines.flatMap((line, i) => starts[i]!.map((at) => line.slice(0, at)))]);
    for (const w of measured.slice(0, lines.length)) expect(w).toBeLessThanOrEqual(width);
    // Three columns of text start at one screen column; the count, aligned right, ends at one.
    const screenStarts = lines.map((_, i) => measured.slice(lines.length + i * 4, lines.length + i * 4 + 3));
    screenStarts.forEach((s, i) => expect(s, JSON.stringify(lines[i])).toEqual(screenStarts[0]));
    expect(new Set(measured.slice(0, lines.length)).size).toBe(1);
    const text = lines.join('\n');
    expect(text).toContain('tab\\there and\\nnewline'.slice(0, width >= 140 ? undefined : 5));
    if (width >= 140) {
      for (const bio of ['👨‍👩‍👧‍👦 family of four', '🇯🇵🇫🇷🇧🇷 three flags', '¯\\_(ツ)_/¯ shrug', 'bell\\u{7} esc\\u{1b}[31m red', 'line\\u{2028}sep \\u{202e}override']) expect(text).toContain(bio);
      expect(text).not.toContain('…');
    } else expect(text).toContain('…');
  }, 60_000);

  it('the default columns fit 60 columns; with colour, null is faint and the string "null" is not', async () => {
    const stub = await stubs(() => ({ text: multilingualPage }));
    const run = await inTerminal(60, 40, ['graph', 'followers', 'jack', '--no-pager', '--quiet', '--fields', 'follower_list_name,follower_username'], { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k', NO_COLOR: '' });
    const { lines, code } = await run.ended();
    expect(code).toBe(0);
    expect(lines).toHaveLength(multilingual.length + 1);
    const colored = (await run.colors()).split('\n');
    multilingual.forEach((record, i) => {
      const line = colored[i + 1]!;
      if (record.follower_list_name === null) expect(line).toMatch(/^\u001b\[2mnull\u001b\[(22|0)?m/);
      else expect(line).toMatch(/^null {2}/);
    });

    const all = await inTerminal(60, 40, ['graph', 'followers', 'jack', '--no-pager', '--quiet'], { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k' });
    const every = await all.ended();
    expect(every.lines).toHaveLength(multilingual.length + 1);
    expect(Math.max(...(await widthsInTmux(every.lines)))).toBeLessThanOrEqual(60);
  }, 60_000);
});
