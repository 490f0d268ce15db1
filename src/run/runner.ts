import type { JsonObject } from '../api/classify.js';
import { CallError } from '../api/classify.js';
import { StoppedError, type ApiClient } from '../api/client.js';
import { isBilled, type Page } from '../api/page.js';
import { PageFailure, fetchPages, type PageRequest, type StopReason } from '../api/paginate.js';
import { ExitCode, toSgqError, worstExitCode } from '../errors.js';
import { parseJson, stringifyJson } from '../json.js';
import type { Formatter } from '../output/formats.js';
import type { Reporter } from '../output/reporter.js';
import type { Sink } from '../output/sink.js';
import { Budget } from './budget.js';
import { buildSummary, type RunSummary, type UserStats } from './summary.js';

/** One unit of work: a user (or list, or nothing for /info) and how to ask for its pages. */
export interface Job {
  /** The name shown in messages and summaries; null for routes without a subject. */
  user: string | null;
  request: PageRequest;
  /** The command that resumes this job from a page. */
  resumeCommand?: (page: number) => string;
  /** Called once the job has fetched everything it was asked for (for --since-last marks). */
  onComplete?: () => void;
}

export interface RunOptions {
  /** Jobs in flight at once: at least 1, at most the number of jobs. */
  concurrency: number;
  limit?: number;
  maxCredits?: number;
  knownCost: number | null;
  /** `--raw`: each body as received, one per line, instead of formatted records. */
  raw: boolean;
  /** Tag each record with the user it was fetched for. */
  tagUser: boolean;
  label: string;
}

export interface RunContext {
  client: ApiClient;
  sink: Sink;
  formatter: Formatter;
  reporter: Reporter;
  /** Aborts everything in flight; the runner aborts it itself on a fatal error. */
  controller: AbortController;
}

const FATAL_FOR_ALL = new Set<number>([ExitCode.config, ExitCode.expired]);

/** Runs the jobs with bounded concurrency, writes records as pages arrive, and returns the summary (with the exit code). */
export async function runJobs(jobs: readonly Job[], options: RunOptions, ctx: RunContext): Promise<RunSummary> {
  const { sink, formatter, reporter, controller } = ctx;
  const budget = new Budget({ limit: options.limit, maxCredits: options.maxCredits, knownCost: options.knownCost });
  const stats: UserStats[] = jobs.map((job) => ({ user: job.user, pages: 0, records: 0, calls: 0, errors: [], exitCode: ExitCode.ok }));
  const stops = new Set<StopReason>();
  /** Users who lost records to --limit: their --since-last mark must not move. */
  const cut = new WeakSet<UserStats>();
  let totalRecords = 0;

  await reporter.startProgress(`${options.label}: starting`);

  const writePage = async (job: Job, stat: UserStats, page: Page) => {
    stat.pages++;
    if (isBilled(page)) stat.calls++;
    for (const message of page.errors) {
      stat.errors.push(message);
      stat.exitCode = worstExitCode([stat.exitCode, ExitCode.service]);
      reporter.error(`${prefix(job)}the service answered: ${message}`);
    }
    if (options.raw) {
      sink.write(`${compact(page.text)}\n`);
      stat.records += page.records.length;
      totalRecords += page.records.length;
    } else {
      const granted = budget.takeRecords(page.records.length);
      // A page cut by --limit leaves records unfetched, even if it was the user's last.
      if (granted < page.records.length) cut.add(stat);
      let records: JsonObject[] = granted < page.records.length ? page.records.slice(0, granted) : page.records;
      if (options.tagUser && job.user !== null) records = records.map((r) => ({ query_user: job.user, ...r }));
      formatter.write(records, page.lossless);
      stat.records += granted;
      totalRecords += granted;
    }
    if (reporter.showsProgress) {
      reporter.progress(`${options.label}: ${stat.pages} page${stat.pages === 1 ? '' : 's'} of ${job.user ?? 'the route'}, ${totalRecords.toLocaleString('en-US')} records`);
    }
    await sink.drain();
  };

  const runJob = async (index: number) => {
    const job = jobs[index]!;
    const stat = stats[index]!;
    const pages = fetchPages(ctx.client, job.request, budget);
    try {
      for (;;) {
        if (controller.signal.aborted || sink.closed) return;
        const next = await pages.next();
        if (next.done) {
          if (next.value !== 'done') stops.add(next.value);
          else if (stat.exitCode === ExitCode.ok && !cut.has(stat)) job.onComplete?.();
          return;
        }
        await writePage(job, stat, next.value);
      }
    } catch (error) {
      if (error instanceof StoppedError || controller.signal.aborted) return;
      const failure = error instanceof PageFailure ? error : undefined;
      const sgq = toSgqError(failure ? failure.error : error);
      stat.exitCode = worstExitCode([stat.exitCode, sgq.exitCode]);
      stat.errors.push(sgq.message);
      const who = prefix(job);
      const where = failure?.page != null && job.request.follow && failure.page > job.request.startPage ? `page ${failure.page} failed: ` : '';
      if (sgq instanceof CallError && sgq.records.length > 0) {
        for (const record of sgq.records) reporter.error(`${who}the service answered: ${record}`);
      } else {
        reporter.error(`${who}${where}${sgq.message}`, sgq.hint);
      }
      if (where && job.resumeCommand && failure?.page != null) {
        stat.resume = job.resumeCommand(failure.page);
        reporter.error(`${who}records before page ${failure.page} were written; resume with: ${stat.resume}`);
      }
      if (FATAL_FOR_ALL.has(sgq.exitCode)) controller.abort('fatal');
    } finally {
      await pages.return('done').catch(() => undefined);
    }
  };

  let nextIndex = 0;
  const worker = async () => {
    while (nextIndex < jobs.length && !controller.signal.aborted && !sink.closed) await runJob(nextIndex++);
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));

  reporter.stopProgress();
  if (!sink.closed) formatter.end();

  const reason = controller.signal.reason as unknown;
  const interrupted = reason === 'SIGINT' ? ExitCode.interrupted : reason === 'SIGTERM' ? ExitCode.terminated : undefined;
  const exitCode = interrupted ?? worstExitCode(stats.map((s) => s.exitCode));
  if (interrupted) reporter.error(`interrupted by ${String(reason)}; every record written so far is complete`);
  for (const stop of stops) reporter.info(stopNote(stop, options));

  return buildSummary(stats, budget, exitCode);
}

/** `user: ` before a message about one job; nothing for routes without a subject. */
const prefix = (job: Job): string => (job.user === null ? '' : `${job.user}: `);

function stopNote(stop: StopReason, options: RunOptions): string {
  switch (stop) {
    case 'limit':
      return `sgq: stopped at --limit ${options.limit}`;
    case 'max-credits':
      return `sgq: stopped before the next call could pass --max-credits ${options.maxCredits}`;
    case 'max-pages':
      return 'sgq: stopped at --max-pages; there are more pages';
    case 'more':
      return 'sgq: there are more pages; add --all to fetch them all, or --page N for one';
    case 'done':
      return '';
  }
}

/** `--raw` promises one body per line; a pretty-printed body is compacted, other text kept. */
function compact(text: string): string {
  if (!/[\r\n]/.test(text)) return text;
  try {
    return stringifyJson(parseJson(text));
  } catch {
    return text.replace(/\r?\n/g, ' ');
  }
}
