import { describe, expect, it } from 'vitest';
import { BIN, sgq } from '../helpers/e2e.js';
import { tempDir } from '../helpers/run.js';
import { churningNights, writeNights } from '../helpers/snapshot-nights.js';
import { shellQuote as quote, useTmux } from '../helpers/tmux.js';
import { until } from '../helpers/wait.js';

// `sgq history` in a real terminal (tmux, a pane of a given size): a chart drawn to the
// pane's width, with the numbers beside it; in a pipe, records.

const tmux = useTmux('history');
let sessions = 0;

/** Runs sgq in a pane of `width` x `height`; resolves with the screen's lines once it ended, and its exit code. */
async function inTerminal(width: number, height: number, args: string[], env: Record<string, string> = {}) {
  const name = `h${++sessions}`;
  const vars = Object.entries({ SGQ_CONFIG_DIR: tempDir(), NO_COLOR: '1', ...env }).map(([k, v]) => `${k}=${quote(v)}`);
  const command = `env ${vars.join(' ')} ${quote(process.execPath)} ${quote(BIN)} ${args.map(quote).join(' ')}; echo "__EXIT $?"; exec cat`;
  const started = await tmux('new-session', '-d', '-s', name, '-x', String(width), '-y', String(height), command);
  expect(started.exitCode, started.stderr).toBe(0);
  const screen = async (colors = false) => (await tmux('capture-pane', '-p', ...(colors ? ['-e'] : []), '-t', name)).stdout;
  await until(async () => /__EXIT \d+/.test(await screen()), 'sgq to end in tmux', 30_000);
  const text = await screen();
  const lines = text.split('\n');
  return { lines: lines.slice(0, lines.findIndex((l) => l.startsWith('__EXIT'))), code: Number(/__EXIT (\d+)/.exec(text)![1]), colors: await screen(true) };
}

const grouped = (n: number) => n.toLocaleString('en-US');

describe('sgq history on a terminal', () => {
  const store = tempDir('sgq-store-');
  writeNights(store, 'jack', churningNights(90, 500));
  const args = ['--sandbox', 'history', 'jack', '--snapshot-dir', store];

  it.each([34, 80, 150])('draws the count, gains and losses to %i columns, with the numbers beside them', async (width) => {
    const records = (await sgq([...args, '-o', 'json'])).stdout;
    const rows = JSON.parse(records) as { count: number; gained: number | null; lost: number | null; taken_at: string }[];
    const { lines, code } = await inTerminal(width, 40, args);
    expect(code).toBe(0);
    for (const line of lines) expect([...line].length, line).toBeLessThanOrEqual(width);
    const counts = rows.map((r) => r.count);
    const axis = (label: string) => lines.findIndex((l) => new RegExp(`^ *${label.replace('+', '\\+')} ┤`).test(l));
    // The highest count labels the top of the area, the lowest its bottom, five rows below.
    const top = axis(grouped(Math.max(...counts)));
    expect(top).toBeGreaterThan(0);
    expect(axis(grouped(Math.min(...counts)))).toBe(top + 5);
    // Then the gains, then the losses, each topped by the most of one snapshot (or of a column's snapshots when they share one).
    expect(lines[top + 6]).toMatch(/^ *\+[\d,]+ ┤/);
    expect(lines[top + 7]).toMatch(/^ *gained │/);
    expect(lines[top + 8]).toMatch(/^ *-[\d,]+ ┤/);
    expect(lines[top + 9]).toMatch(/^ *lost │/);
    // Every column of the plot is drawn: the lowest count still shows an eighth of a block.
    const plot = lines[top + 5]!.slice(lines[top + 5]!.indexOf('┤') + 1);
    expect(plot.length).toBe(width - lines[top + 5]!.indexOf('┤') - 1);
    expect(plot).not.toMatch(/ /);
    expect(lines[top + 10]).toMatch(/└2026-01-01/);
    if (width >= 40) expect(lines[top + 10]).toMatch(/2026-03-31$/);
    const last = rows.at(-1)!;
    const summary = lines.slice(top + 11).join(' ');
    expect(summary).toContain(`last ${grouped(last.count)} (+${grouped(last.gained!)} -${grouped(last.lost!)}) at 2026-03-31 03:15 UTC`);
    const total = (k: 'gained' | 'lost') => grouped(rows.reduce((n, r) => n + (r[k] ?? 0), 0));
    expect(summary).toContain(`in all +${total('gained')} -${total('lost')}`);
    expect(lines[0]).toMatch(/^jack, followers: 90 snapshots/);
  });

  it('colours the chart unless NO_COLOR is set, and prints records when -o is given', async () => {
    const coloured = await inTerminal(80, 30, args, { NO_COLOR: '', TERM: 'xterm-256color' });
    expect(coloured.code).toBe(0);
    expect(coloured.colors).toMatch(/\x1b\[(3[26]|32;)[^m]*m[▁▂▃▄▅▆▇█]/);
    const records = await inTerminal(200, 30, [...args, '-o', 'ndjson', '--since', '2026-03-25']);
    expect(records.lines.filter((l) => l.startsWith('{"user":"jack"'))).toHaveLength(7);
  });
});
