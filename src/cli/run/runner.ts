import { STATUS_CODES } from 'node:http';
import type { JsonObject } from '../../core/classify.js';
import { CallError } from '../../core/classify.js';
import { StoppedError, type ApiClient } from '../../core/client.js';
import { isBilled } from '../../core/page.js';
import { PageFailure, fetchPages, type FetchedPage, type PageRequest, type StopReason } from '../../core/paginate.js';
import { ExitCode, toSgqError, worstExitCode } from '../../core/errors.js';
import { parseJson, stringifyJson } from '../../core/json.js';
import type { Format, Formatter } from '../output/formats.js';
import type { Reporter } from '../output/reporter.js';
import type { Sink } from '../output/sink.js';
import { Budget } from '../../core/budget.js';
import { RemainingUsers, type ResumeSubjects } from './remaining.js';
import { SummaryCollector, type RunSummary, type UserStats } from './summary.js';

/** One unit of work: a user (or list, or nothing for /info) and how to ask for its pages. */
export interface Job {
  /** The name shown in messages and summaries; null for routes without a subject. */
  user: string | null;
  request: PageRequest;
  /** Called once the job has fetched everything it was asked for (for --since-last marks). */
  onComplete?: () => void;
  /** Sees each page's records as they are written, before query_user is added (--snapshot). */
  onRecords?: (records: readonly JsonObject[], lossless: boolean) => Promise<void>;
  /** The records go to `onRecords` only, not to the output (--changes prints what `onEnd` emits). */
  hideRecords?: boolean;
  /** Called once the job has ended, however it ended; may print records through `emit`. */
  onEnd?: (end: JobEnd) => Promise<void>;
}

export interface JobEnd {
  /** Why the job did not fetch everything, or undefined when it did, without an error. */
  cutShort?: string;
  /** Credits its calls cost. */
  credits: number;
  /** Writes records to the output as pages are written (tagged with query_user when the run tags). */
  emit: (records: JsonObject[], lossless: boolean) => Promise<void>;
  reporter: Reporter;
}

/** Where a resume picks up: the page (for one user's `--all`), what is left of the budget, and of the output. */
export interface Continuation {
  /** `--page N --all` for one user stopped part-way; undefined to start as the run did. */
  page?: number;
  /** Pages the user had before `page`, for what is left of --max-pages. */
  pagesDone?: number;
  /** What is left of --limit and --max-credits; undefined when not set or used up. */
  limit?: number;
  maxCredits?: number;
  format: Format;
  /** csv: the columns written so far, and whether the header is among them. */
  columns?: readonly string[];
  headerWritten: boolean;
  /** The run's output ends complete (exit 0): `--out` FILE itself, not FILE.partial, holds what came before. */
  outputComplete: boolean;
}

export interface RunOptions {
  /** Jobs in flight at once: at least 1. */
  concurrency: number;
  /** `--parallel`: pages of one job's `--all` in flight at once (default 1). */
  parallel?: number;
  limit?: number;
  maxCredits?: number;
  knownCost: number | null;
  /** `--raw`: each body as received, one per line, instead of formatted records. */
  raw: boolean;
  /** `sgq api -i`: each answer's status line and headers before its records. */
  include?: boolean;
  /** Tag each record with the user it was fetched for. */
  tagUser: boolean;
  label: string;
  format: Format;
  /** The command that runs the rest of this run for some users; none where a route cannot be resumed. */
  resume?: (subjects: ResumeSubjects, from: Continuation) => string;
  /** Where the users left go when there are too many for a command line. */
  remainingFile: string;
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

/**
 * After this many users in a row fail with network or server errors (and none in between
 * succeeds), the service is taken to be down and no further user is started.
 */
export const UNREACHABLE_AFTER = 3;

/** Codes that leave a user worth asking again as it was: not reached, or stopped before its first page. */
const RETRYABLE = new Set<number>([ExitCode.network]);

/** Runs the jobs with bounded concurrency, writes records as pages arrive, and returns the summary (with the exit code). */
export async function runJobs(jobs: AsyncIterable<Job> | Iterable<Job>, options: RunOptions, ctx: RunContext): Promise<RunSummary> {
  const { sink, formatter, reporter, controller } = ctx;
  const budget = new Budget({ limit: options.limit, maxCredits: options.maxCredits, knownCost: options.knownCost });
  const summary = new SummaryCollector();
  const remaining = new RemainingUsers(options.remainingFile);
  const stops = new Set<StopReason>();
  /** Users who lost records to --limit: their --since-last mark must not move. */
  const cut = new WeakSet<UserStats>();
  let totalRecords = 0;
  let failedInARow = 0;
  /** Users among `remaining` that were asked and failed; the others were never asked. */
  let failedAndLeft = 0;
  /** --limit or --max-credits is met: no further user is started. */
  let budgetMet = false;

  const continuation = (page?: number, pagesDone?: number): Continuation => {
    const limit = budget.recordsLeft;
    const maxCredits = budget.maxCreditsLeft;
    return {
      page,
      pagesDone,
      limit: options.limit !== undefined && limit > 0 ? limit : undefined,
      maxCredits: maxCredits !== undefined && maxCredits > 0 ? maxCredits : undefined,
      format: options.format,
      columns: formatter.columns,
      headerWritten: formatter.headerWritten ?? false,
      outputComplete: false,
    };
  };

  await reporter.startProgress(`${options.label}: starting`);

  const writePage = async (job: Job, stat: UserStats, page: FetchedPage) => {
    stat.pages++;
    if (isBilled(page)) stat.calls++;
    if (page.cached) stat.cachedPages++;
    for (const message of page.errors) {
      stat.errors.push(message);
      stat.exitCode = worstExitCode([stat.exitCode, ExitCode.service]);
      reporter.error(`${prefix(job)}the service answered: ${message}`);
    }
    if (options.include) sink.write(statusAndHeaders(page));
    if (options.raw) {
      sink.write(`${compact(page.text)}\n`);
    } else {
      // A page cut by --limit leaves records unfetched, even if it was the user's last.
      if (page.granted < page.records.length) cut.add(stat);
      let records: JsonObject[] = page.granted < page.records.length ? page.records.slice(0, page.granted) : page.records;
      if (job.onRecords) await job.onRecords(records, page.lossless);
      if (job.hideRecords) records = [];
      if (options.tagUser && job.user !== null) records = records.map((r) => ({ query_user: job.user, ...r }));
      formatter.write(records, page.lossless);
    }
    stat.records += page.granted;
    totalRecords += page.granted;
    if (reporter.showsProgress) {
      reporter.progress(`${options.label}: ${stat.pages} page${stat.pages === 1 ? '' : 's'} of ${job.user ?? 'the route'}, ${totalRecords.toLocaleString('en-US')} records`);
    }
    await sink.drain();
  };

  /** The per-user resume of a job stopped after some of its pages. */
  const resumeFrom = (job: Job, stat: UserStats, page: number) => {
    if (!options.resume) return;
    stat.resume = options.resume({ users: [job.user] }, continuation(page, stat.pages));
    return stat.resume;
  };

  /** Runs one job; false when it was stopped before it asked anything (it is left for the resume). */
  const runJob = async (job: Job, stat: UserStats): Promise<boolean> => {
    const pages = fetchPages(ctx.client, job.request, budget, {
      signal: controller.signal,
      parallel: options.parallel,
      onExtraCall: () => stat.extraCalls++,
    });
    /** The page to ask next, once a page was written. */
    let next: number | null = null;
    /** Why the job did not fetch everything (for --snapshot); undefined once it did. */
    let cutShort: string | undefined = 'the run stopped before its last page';
    try {
      for (;;) {
        if (controller.signal.aborted || sink.closed) break;
        const result = await pages.next();
        if (result.done) {
          if (result.value === 'limit' || result.value === 'max-credits') budgetMet = true;
          if (result.value !== 'done') {
            stops.add(result.value);
            cutShort = `it stopped at --${result.value === 'more' ? 'all (one page only)' : result.value}`;
          } else if (stat.exitCode === ExitCode.ok && !cut.has(stat)) {
            cutShort = undefined;
            job.onComplete?.();
          } else {
            cutShort = 'the service answered with errors';
          }
          if (stat.pages === 0 && result.value !== 'done' && result.value !== 'more') {
            remaining.add(job.user);
            return false;
          }
          return true;
        }
        await writePage(job, stat, result.value);
        next = job.request.follow ? result.value.nextPage : null;
      }
    } catch (error) {
      if (!(error instanceof StoppedError || controller.signal.aborted)) {
        cutShort = 'it failed';
        reportFailure(job, stat, error);
        return true;
      }
    } finally {
      await pages.return('done').catch(() => undefined);
      if (job.onEnd) await endJob(job, stat, cutShort);
    }
    // Stopped by an abort or a closed output before it was done.
    if (sink.closed) return true;
    if (stat.pages === 0) {
      remaining.add(job.user);
      return false;
    }
    if (next !== null && resumeFrom(job, stat, next)) reporter.error(`${prefix(job)}stopped before page ${next}; resume with: ${stat.resume}`);
    return true;
  };

  /** Hands a job's end to its hook (--snapshot stores or refuses it; --changes prints what changed). */
  const endJob = async (job: Job, stat: UserStats, cutShort: string | undefined) => {
    const emit = async (records: JsonObject[], lossless: boolean) => {
      if (sink.closed) return;
      formatter.write(options.tagUser && job.user !== null ? records.map((r) => ({ query_user: job.user, ...r })) : records, lossless);
      await sink.drain();
    };
    try {
      await job.onEnd!({ cutShort, credits: stat.calls * budget.estimatedCost(), emit, reporter });
    } catch (error) {
      const sgq = toSgqError(error);
      stat.exitCode = worstExitCode([stat.exitCode, sgq.exitCode]);
      stat.errors.push(sgq.message);
      reporter.error(`${prefix(job)}${sgq.message}`, sgq.hint);
    }
  };

  const reportFailure = (job: Job, stat: UserStats, error: unknown) => {
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
    if (where && failure?.page != null && resumeFrom(job, stat, failure.page)) {
      reporter.error(`${who}records before page ${failure.page} were written; resume with: ${stat.resume}`);
    } else if (stat.pages === 0 && RETRYABLE.has(sgq.exitCode)) {
      remaining.add(job.user);
      failedAndLeft++;
    }
    if (FATAL_FOR_ALL.has(sgq.exitCode)) controller.abort('fatal');
  };

  /** Counts users failing in a row on the network; enough of them stop the run. */
  const watchReachability = (stat: UserStats) => {
    if (stat.exitCode === ExitCode.network && stat.pages === 0) failedInARow++;
    else if (stat.exitCode === ExitCode.ok || stat.pages > 0) failedInARow = 0;
    if (failedInARow >= UNREACHABLE_AFTER && !controller.signal.aborted) controller.abort('unreachable');
  };

  const source = isAsync(jobs) ? jobs[Symbol.asyncIterator]() : jobs[Symbol.iterator]();
  let taken = 0;
  const startable = () => !controller.signal.aborted && !sink.closed && !budgetMet;
  const worker = async () => {
    while (startable()) {
      const item = await source.next();
      if (item.done) return;
      const order = taken++;
      const job = item.value;
      const stat: UserStats = { user: job.user, pages: 0, records: 0, calls: 0, extraCalls: 0, cachedPages: 0, errors: [], exitCode: ExitCode.ok };
      if (!startable()) {
        remaining.add(job.user);
        break;
      }
      if (!(await runJob(job, stat))) continue;
      watchReachability(stat);
      summary.add(order, stat);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  // The users never started, for the resume (not when the reader went away: nobody wants them).
  if (!sink.closed) {
    for (;;) {
      const item = await source.next();
      if (item.done) break;
      taken++;
      remaining.add(item.value.user);
    }
  }
  await source.return?.();

  reporter.stopProgress();
  if (!sink.closed) formatter.end();

  const reason = controller.signal.reason as unknown;
  const interrupted = reason === 'SIGINT' ? ExitCode.interrupted : reason === 'SIGTERM' ? ExitCode.terminated : undefined;
  const exitCode = interrupted ?? summary.worstExitCode;
  if (interrupted) reporter.error(`interrupted by ${String(reason)}; every record written so far is complete`);
  for (const stop of stops) if (stop !== 'limit' && stop !== 'max-credits') reporter.info(stopNote(stop, options));

  const rest = sink.closed ? undefined : resumeRest(exitCode);
  const notAttempted = remaining.count - failedAndLeft;
  if (reason === 'unreachable') {
    reporter.error(
      `the service is unreachable: stopped after ${UNREACHABLE_AFTER} users failed in a row; ${count(notAttempted, 'user')} ${notAttempted === 1 ? 'was' : 'were'} not attempted; ${rest ? `resume them with: ${rest.resume}` : remaining.failure ?? 'try again later'}`,
    );
  } else {
    for (const stop of stops) {
      if (stop !== 'limit' && stop !== 'max-credits') continue;
      const left = notAttempted > 0 && rest ? `; ${count(notAttempted, 'user')} not attempted; with a new budget, resume them with: ${rest.resume}` : '';
      reporter.info(`${stopNote(stop, options)}${left}`);
    }
    if (rest && !budgetMet && (interrupted || reason === 'fatal' || taken > 1)) {
      reporter.error(`${count(remaining.count, 'user')} not finished; resume with: ${rest.resume}`);
    }
  }
  if (remaining.failure) reporter.error(remaining.failure);

  return summary.build(budget, exitCode, rest);

  function resumeRest(code: number): { resume: string; remaining: number } | undefined {
    const subjects = remaining.finish();
    if (!subjects || !options.resume) return undefined;
    return { resume: options.resume(subjects, { ...continuation(), outputComplete: code === ExitCode.ok }), remaining: remaining.count };
  }
}

const count = (n: number, noun: string) => `${n.toLocaleString('en-US')} ${noun}${n === 1 ? '' : 's'}`;

const isAsync = (jobs: AsyncIterable<Job> | Iterable<Job>): jobs is AsyncIterable<Job> => Symbol.asyncIterator in jobs;

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

/** The head of an answer as `gh api -i` shows it: the status line, the headers, a blank line. */
function statusAndHeaders(page: FetchedPage): string {
  const lines = [`HTTP/1.1 ${page.status} ${STATUS_CODES[page.status] ?? ''}`.trimEnd()];
  for (const [name, value] of Object.entries(page.headers)) for (const v of [value].flat()) lines.push(`${name}: ${v}`);
  return `${lines.join('\n')}\n\n`;
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
