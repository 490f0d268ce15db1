import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN } from '../helpers/e2e.js';
import { tempDir } from '../helpers/run.js';
import { shellQuote, useTmux } from '../helpers/tmux.js';
import { useSandbox } from '../helpers/sandbox.js';
import { waitFor } from '../helpers/wait.js';

// The progress line of a long export with a bound, as a person sees it: tmux panes of a
// given width, the run slowed by the sandbox's latency so that the line can be caught.
const sb = useSandbox({ faults: { latencyMs: 150 } });
const tmux = useTmux('progress');
const quote = shellQuote;
let sessions = 0;

async function inTerminal(width: number, args: string[]) {
  const name = `p${++sessions}`;
  const vars = Object.entries({ ...sb.env(), SGQ_CONFIG_DIR: tempDir(), NO_COLOR: '1' }).map(([k, v]) => `${k}=${quote(v)}`);
  const run = `env ${vars.join(' ')} ${quote(process.execPath)} ${quote(BIN)} ${args.map(quote).join(' ')}; echo "__EXIT $?"; exec cat`;
  const started = await tmux('new-session', '-d', '-s', name, '-x', String(width), '-y', '10', run);
  expect(started.exitCode, started.stderr).toBe(0);
  return { screen: async () => (await tmux('capture-pane', '-p', '-t', name)).stdout };
}

/** The screen's progress line once it shows `pattern`. */
const lineShowing = (screen: () => Promise<string>, pattern: RegExp): Promise<string> =>
  waitFor(async () => (await screen()).split('\n').find((line) => pattern.test(line)) ?? '', `a progress line matching ${pattern}`, 30_000);

describe('progress of a long export with a bound, in a real terminal', () => {
  const args = (out: string) => ['graph', 'followers', 'big_20000', '--all', '--limit', '8000', '--out', out];

  it('at 200 columns: records, credits spent and left, a bar, the time left, pages, rate and elapsed time on one line', async () => {
    const run = await inTerminal(200, args(join(tempDir(), 'f.ndjson')));
    // Past the first second, once the rate and the time left are known.
    const line = await lineShowing(run.screen, /records\/s/);
    expect(line).toMatch(/^\S [\d,]+ records · \d+ credits spent, [\d,]+ left · \[[█░]{12}\] \d+% · \d+:\d\d left · graph followers big_20000 · \d+ pages? · [\d,]+ records\/s · \d+:\d\d$/);
    const [, records, credits, left, pages] = /^\S ([\d,]+) records · (\d+) credits spent, ([\d,]+) left .* (\d+) pages?/.exec(line)!.map((n) => Number(n.replaceAll(',', '')));
    expect(pages).toBeGreaterThan(0);
    // Followers cost 3 credits a call, a page 500 records; the sandbox's balance starts at 1,000,000.
    expect(records).toBe(pages! * 500);
    // A call settled and not yet written is spent already.
    expect([pages! * 3, (pages! + 1) * 3]).toContain(credits);
    expect(left).toBe(1_000_000 - credits!);
    expect([...line].length).toBeLessThanOrEqual(200);
  }, 60_000);

  it('at 80 columns: the counts and the money first, never wrapped', async () => {
    const run = await inTerminal(80, args(join(tempDir(), 'f.ndjson')));
    const line = await lineShowing(run.screen, /credits spent, [\d,]+ left · \[/);
    expect(line).toMatch(/^\S [\d,]+ records · \d+ credits spent, [\d,]+ left · \[[█░]{12}\] \d+%/);
    expect([...line].length).toBeLessThanOrEqual(80);
    // No part of the line went to a second row.
    const rows = (await run.screen()).split('\n');
    const at = rows.findIndex((row) => row.includes('credits spent'));
    expect(rows[at + 1] ?? '').not.toMatch(/records|pages|left/);
  }, 60_000);
});
