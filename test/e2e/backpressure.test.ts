import { execa } from 'execa';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN } from '../helpers/e2e.js';
import { tempDir } from '../helpers/run.js';
import { shellQuote, useTmux } from '../helpers/tmux.js';
import { useSandbox } from '../helpers/sandbox.js';
import { until, waitFor } from '../helpers/wait.js';

// Output holds back fetching: into a reader that stops reading, sgq buys at most one page
// beyond what the reader took and what the system holds for it. Records in the service's
// shape: a page of 500 is some 237 KB of NDJSON, more than a pipe's 64 KiB, so the bound
// below counts whole pages and is far from the 40 pages the account has.
const sb = useSandbox();
const calls = () => sb.sandbox.calls.get('graph/get_followers') ?? 0;
const ACCOUNT = 'big_20000';
const TOTAL_PAGES = 40;

/**
 * A reader that takes `bytes` of its stdin, then stops reading and says, in `flag`, how many
 * bytes wait in the pipe (FIONREAD) once that number stops growing: sgq can write no more.
 * It then waits, reading nothing, until it is killed.
 */
const READER = String.raw`
import fcntl, os, signal, struct, sys, termios, time
want, flag = int(sys.argv[1]), sys.argv[2]
got = 0
while got < want:
    chunk = os.read(0, min(65536, want - got))
    if not chunk: break
    got += len(chunk)
last, same = -1, 0
while same < 20:
    waiting = struct.unpack('i', fcntl.ioctl(0, termios.FIONREAD, b'\0\0\0\0'))[0]
    same = same + 1 if waiting == last else 0
    last = waiting
    time.sleep(0.05)
open(flag + '.tmp', 'w').write('%d %d' % (waiting, os.getpid())); os.rename(flag + '.tmp', flag)
signal.pause()
`;

async function pageBytes(): Promise<number> {
  const one = await execa(process.execPath, [BIN, 'graph', 'followers', ACCOUNT], { env: { ...sb.env(), SGQ_CONFIG_DIR: tempDir() } });
  return Buffer.byteLength(`${one.stdout}\n`);
}

describe('a slow pipe holds back fetching', () => {
  it.each([[[]], [['--parallel', '4']]])('sgq %j buys at most one page beyond what the reader took and the pipe holds; its end stops the run', async (extra) => {
    const page = await pageBytes();
    expect(page).toBeGreaterThan(65536);
    const dir = tempDir();
    const script = join(dir, 'reader.py');
    const flag = join(dir, 'full');
    writeFileSync(script, READER);
    const before = calls();
    const run = `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} graph followers ${ACCOUNT} --all ${extra.join(' ')} | python3 ${JSON.stringify(script)} ${page} ${JSON.stringify(flag)}`;
    const child = execa('sh', ['-c', `exec 2>/dev/null; ${run}`], { env: { ...sb.env(), SGQ_CONFIG_DIR: tempDir() }, reject: false });
    await until(() => existsSync(flag), 'the reader to take a page and the pipe to fill', 30_000);
    const [held, reader] = readFileSync(flag, 'utf8').split(' ').map(Number) as [number, number];
    // Pages the reader took or the pipe holds (whole or in part), and one more.
    // --parallel n: the pages already asked when the reader stopped (up to n-1 beyond the next) are bought too.
    const width = extra.length ? Number(extra[1]) : 1;
    const bound = 1 + Math.ceil(held / page) + Math.max(1, width - 1);
    const bought = calls() - before;
    expect(bought).toBeGreaterThanOrEqual(2);
    expect(bought).toBeLessThanOrEqual(bound);
    expect(bound).toBeLessThan(TOTAL_PAGES / 4);
    // The reader goes away: sgq ends, without buying another page.
    process.kill(reader, 'SIGKILL');
    await child;
    expect(calls() - before).toBeLessThanOrEqual(bound);
  }, 60_000);
});

// A real less in a real terminal: sgq must not buy pages while the first screen is read,
// and `q` ends it at once with nothing more bought.
const tmux = useTmux('bp');
const quote = shellQuote;

describe('the pager holds back fetching', () => {
  it.each([
    [80, '-o ndjson'],
    [200, '-o ndjson'],
    [80, ''],
    [200, ''],
  ])('at %i columns (%s): less shows the first screen, sgq waits within a page of it, q ends it with no further call', async (width, format) => {
    // The default on a terminal is the table: sized by its first page, then streamed page by
    // page; a row of it is at least 20 bytes (a name and the gaps of a dozen columns).
    const page = format ? await pageBytes() : 500 * 20;
    const before = calls();
    const vars = Object.entries({ ...sb.env(), SGQ_CONFIG_DIR: tempDir(), NO_COLOR: '1', PAGER: 'less' }).map(([k, v]) => `${k}=${quote(v)}`);
    const name = `w${width}${format ? 'n' : 't'}`;
    const run = `env ${vars.join(' ')} ${quote(process.execPath)} ${quote(BIN)} graph followers ${ACCOUNT} --all ${format} --quiet; echo "__EXIT $?"; exec cat`;
    expect((await tmux('new-session', '-d', '-s', name, '-x', String(width), '-y', '20', run)).exitCode).toBe(0);
    const screen = async () => (await tmux('capture-pane', '-p', '-t', name)).stdout;
    await until(async () => /^:\s*$/m.test(await screen()), "less's prompt on the first screen", 30_000);
    // less has taken a screen (well under a page); what sgq wrote beyond sits in the pager's
    // socket (some 208 KiB, under one page of these records): at most one page more is bought.
    await waitFor(async () => (await screen()).split('\n').filter((l) => l.trim()).length >= 15, 'records on the screen');
    const atPrompt = calls() - before;
    expect(atPrompt).toBeGreaterThanOrEqual(1);
    const bound = Math.min(TOTAL_PAGES - 1, 1 + Math.ceil(212_992 / page) + 1);
    expect(atPrompt).toBeLessThanOrEqual(bound);
    expect(await screen()).not.toContain('__EXIT');
    await tmux('send-keys', '-t', name, 'q');
    await until(async () => /__EXIT \d+/.test(await screen()), 'sgq to end once less quits', 10_000);
    expect(/__EXIT (\d+)/.exec(await screen())![1]).toBe('0');
    // Pages of a table are smaller than the pager's socket: it may still have been filling it
    // when the prompt showed, within the same bound; nothing is bought once less has quit.
    if (format) expect(calls() - before).toBe(atPrompt);
    else expect(calls() - before).toBeLessThanOrEqual(bound);
  }, 60_000);
});
