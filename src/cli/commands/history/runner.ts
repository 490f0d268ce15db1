import { ExitCode, interruptedBy, usageError } from '../../../core/errors.js';
import type { Format } from '../../formats/formats.js';
import { chooseFormat, terminalWidth } from '../../formats/formats.js';
import { claimOutput, openOutput, outLockOptions } from '../../output/pipeline.js';
import { colorLevel } from '../../start/io.js';
import type { Reporter } from '../../stderr/reporter.js';
import type { CommandContext } from '../../program/context.js';
import { Subjects } from '../../input/subjects.js';
import { instantOf } from '../../snapshots/instants.js';
import { historyRecord, type HistorySeries, type Period } from './history-series.js';
import { openHistorySource, type HistorySource } from './history-source.js';
import { grouped } from '../../../core/words.js';

// `sgq history USER...`: each snapshot's count, gained and lost, oldest first, from the
// snapshot store or a dataset. Records in a pipe (or with -o, --fields, --out), a chart on a
// terminal, a page with --html.

export interface HistoryFlags {
  following?: boolean;
  how?: string;
  since?: string;
  until?: string;
  dataset?: string;
  snapshotDir?: string;
  html?: string;
  output?: Format;
  fields?: string[];
  wide?: boolean;
  out?: string;
  waitLock?: { ms: number; text: string };
}

export async function runHistoryCommand(ctx: CommandContext, args: string[], flags: HistoryFlags): Promise<number> {
  const { io } = ctx;
  const reporter = await ctx.reporter();
  checkFlags(flags);
  const period = periodOf(flags, (io.now ?? (() => new Date()))());
  const users: string[] = [];
  for await (const user of await Subjects.open(args, io, 2)) users.push(user);
  if (io.signal?.aborted) throw interruptedBy(io.signal.reason);
  const source = await openHistorySource(ctx, flags, reporter);
  try {
    if (flags.html !== undefined) return await writePage(ctx, flags.html, flags, () => readAll(source, users, period, reporter, true), reporter);
    const chart = io.stdoutIsTTY && flags.output === undefined && flags.fields === undefined && flags.out === undefined && !flags.wide;
    if (chart) return await drawChart(ctx, await readAll(source, users, period, reporter, false));
    return await printRecords(ctx, flags, (each) => readEach(source, users, period, reporter, each), reporter);
  } catch (error) {
    throw io.signal?.aborted ? interruptedBy(io.signal.reason) : error;
  }
}

function checkFlags(flags: HistoryFlags): void {
  if (flags.html !== undefined && (flags.output !== undefined || flags.fields !== undefined || flags.out !== undefined || flags.wide)) {
    throw usageError('--html writes a page, not records: it takes no -o, --fields, --wide or --out', 'run sgq history once for the page and once more for the records');
  }
  if (flags.dataset !== undefined && flags.snapshotDir !== undefined) throw usageError('--dataset and --snapshot-dir name two sources: give one');
  if (flags.dataset !== undefined && flags.how !== undefined) {
    throw usageError('--how does not apply to --dataset', "the dataset keeps each run's query_user as it was given: name the user as the runs did (an id for --how userid)");
  }
}

function periodOf(flags: HistoryFlags, now: Date): Period {
  const since = flags.since === undefined ? undefined : instantOf(flags.since, now, '--since', { endOfDay: false });
  const until = flags.until === undefined ? undefined : instantOf(flags.until, now, '--until', { endOfDay: true });
  if (since !== undefined && until !== undefined && since > until) throw usageError(`--since ${flags.since} is after --until ${flags.until}`);
  return { since, until };
}

/** Each user's series in turn (in the order given); a user with nothing kept is said on stderr and makes the exit code 2. */
async function readEach(source: HistorySource, users: readonly string[], period: Period, reporter: Reporter, each: (series: HistorySeries) => Promise<void>, lists = false): Promise<number> {
  let code: number = ExitCode.ok;
  for (const user of users) {
    const series = await source.series(user, period, lists);
    if (!series) {
      reporter.error(...source.nothingOf(user));
      code = ExitCode.usage;
      continue;
    }
    if (!series.records.length) reporter.info(`sgq: ${user}: no snapshot ${periodText(period)}`);
    await each(series);
  }
  return code;
}

async function readAll(source: HistorySource, users: readonly string[], period: Period, reporter: Reporter, lists: boolean): Promise<{ series: HistorySeries[]; code: number }> {
  const series: HistorySeries[] = [];
  const code = await readEach(source, users, period, reporter, async (s) => void series.push(s), lists);
  return { series, code };
}

const periodText = (period: Period): string =>
  period.since && period.until ? `between ${period.since} and ${period.until}` : period.since ? `since ${period.since}` : period.until ? `up to ${period.until}` : 'kept';

/** The records, through the output every command writes with (-o, --fields, --out). */
async function printRecords(ctx: CommandContext, flags: HistoryFlags, read: (each: (series: HistorySeries) => Promise<void>) => Promise<number>, reporter: Reporter): Promise<number> {
  const { io, config } = ctx;
  const format = chooseFormat(flags, config, io.stdoutIsTTY, (line) => reporter.warn(line));
  const claimed = await claimOutput(flags.out, outLockOptions(flags.waitLock, io.signal, reporter));
  let output;
  try {
    output = await openOutput(io, claimed.target, { format, fields: flags.fields, wide: flags.wide, pager: false }, reporter, () => undefined);
  } catch (error) {
    claimed.release();
    throw error;
  }
  const { sink, formatter } = output;
  let code: number;
  let ok = false;
  try {
    code = await read(async (series) => {
      if (sink.closed) return;
      await formatter.write(series.records.map(historyRecord), false);
      await sink.drain();
    });
    ok = true;
  } finally {
    if (!sink.closed) await formatter.end();
    const note = await sink.finish(ok);
    claimed.release();
    if (note) reporter.error(note);
  }
  if (sink.failure) throw sink.failure;
  return sink.closed ? ExitCode.ok : code;
}

/** The chart, on a terminal: drawn to its width. */
async function drawChart(ctx: CommandContext, { series, code }: { series: HistorySeries[]; code: number }): Promise<number> {
  const { io } = ctx;
  const { chartText } = await import('./history-chart.js');
  const text = await chartText(series, { width: terminalWidth(io) ?? 80, color: colorLevel(io, 'stdout') > 0 });
  if (text) await new Promise<void>((resolve, reject) => io.stdout.write(text, (error) => (error ? reject(error) : resolve())));
  return code;
}

/** --html FILE: the page, written as --out writes a file (locked, a temporary file flushed and renamed into place). */
async function writePage(ctx: CommandContext, file: string, flags: HistoryFlags, read: () => Promise<{ series: HistorySeries[]; code: number }>, reporter: Reporter): Promise<number> {
  const { io } = ctx;
  const claimed = await claimOutput(file, outLockOptions(flags.waitLock, io.signal, reporter));
  try {
    const { series, code } = await read();
    const { writeHistoryPage } = await import('./history-page.js');
    await writeHistoryPage(claimed.target!, series, reporter);
    const snapshots = series.reduce((n, s) => n + s.records.length, 0);
    reporter.info(`sgq: wrote ${file}: ${grouped(snapshots)} snapshot${snapshots === 1 ? '' : 's'} of ${series.map((s) => s.user).join(', ') || 'no user'}`);
    return code;
  } finally {
    claimed.release();
  }
}
