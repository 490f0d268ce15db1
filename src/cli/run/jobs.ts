import { STATUS_CODES } from 'node:http';
import type { JsonObject } from '../../core/classify.js';
import { CallError } from '../../core/classify.js';
import { StoppedError, type ApiClient } from '../../core/client.js';
import { isBilled, type PageText } from '../../core/page.js';
import { PageFailure, fetchPages, type FetchedPage, type PageRequest, type StopReason } from '../../core/paginate.js';
import { ExitCode, worstExitCode, type SgqError } from '../../core/errors.js';
import { cliError } from '../program/errors-to-flags.js';
import { FileError } from '../../fs/file-errors.js';
import { parseJson, stringifyJson } from '../../core/json.js';
import type { Format, Formatter } from '../formats/formats.js';
import type { Reporter } from '../stderr/reporter.js';
import { fitLine, progressParts, type RunBounds } from '../stderr/progress.js';
import type { Sink } from '../output/sink.js';
import { Budget, type BudgetLimits } from '../../core/budget.js';
import { RemainingUsers, type ResumeSubjects } from './remaining.js';
import { SummaryCollector, type RunSummary, type UserStats } from './summary.js';
import { concludeRun, UNREACHABLE_AFTER } from './ending.js';
import { sinceNightPages, type Night } from './since-night.js';

/** One unit of work: a user (or list, or nothing for /info) and how to ask for its pages. */
export interface Job {
  /** The name shown in messages and summaries; null for routes without a subject. */
  user: string | null;
  request: PageRequest;
  /** Before its first request: may refuse the job (--snapshot locks the user's folder). */
  onStart?: () => Promise<void>;
  /** Called once the job has fetched everything it was asked for, complete as of `asOf` (stages its --since-last mark). */
  onComplete?: (asOf: Date) => void;
  /**
   * Sees each page's records as they are written, before query_user is added (--snapshot);
   * `page` is the page they came from, for a hook that hands its text to another thread (--dataset).
   */
  onRecords?: (records: readonly JsonObject[], lossless: boolean, page?: PageText) => Promise<void>;
  /** The records go to `onRecords` only, not to the output (--changes prints what `onEnd` emits). */
  hideRecords?: boolean;
  /** Called once the job has ended, however it ended; may print records through `emit`. */
  onEnd?: (end: JobEnd) => Promise<void>;
  /**
   * `--full-every`: after `onStart`, what its list is tonight (since-night.ts); a night between
   * whole ones asks with `since` and may fall back to `request`. None: `request`, as built.
   */
  night?: () => Night;
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

export type { Continuation } from './ending.js';
import type { Continuation } from './ending.js';

export interface RunOptions {
  /** Jobs in flight at once: at least 1. */
  concurrency: number;
  /** `--parallel`: pages of one job's `--all` in flight at once (default 1). */
  parallel?: number;
  limit?: number;
  maxCredits?: number;
  /** Credits per call where a price is known (run-price.ts). */
  knownCost: number | null;
  /** The price was stated by the user (see BudgetLimits.trusted). */
  priceTrusted?: boolean;
  /** Told of prices the balances show (see Budget). */
  onPrice?: BudgetLimits['onPrice'];
  /** The calls of other processes on the account (see Budget). */
  watch?: BudgetLimits['watch'];
  /** Reads the balance with a free call, before the first call of a run under --max-credits (see Budget). */
  openingBalance?: () => Promise<number | undefined>;
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
  /** The run's start: what a complete job's records are complete as of, unless older cached answers served it. */
  startedAt: Date;
  /** How many users the run was given, when known in advance (not a list on stdin): the progress bar's bound. */
  users?: number;
}

export interface RunContext {
  client: ApiClient;
  sink: Sink;
  formatter: Formatter;
  reporter: Reporter;
  /** Aborts everything in flight; the runner aborts it itself on a fatal error. */
  controller: AbortController;
  /**
   * After each job: the scope commits what was staged if the output holding it is durable.
   * Once a commit has failed it returns the users whose staged results were dropped.
   */
  onJobEnd?: () => Promise<readonly (string | null)[] | undefined | void>;
  /**
   * Once every job has ended and the output has its last records: the scope commits all that
   * is staged if the output is durable already (stdout flushed), so that a failed commit's
   * users are listed for the resume by this run's ending, not lost after it.
   */
  onJobsDone?: () => Promise<readonly (string | null)[] | undefined | void>;
  /** Sees each answer before its records are written; throws to refuse it (a sandbox answering for a service). */
  onAnswer?: (page: FetchedPage) => void;
}

const FATAL_FOR_ALL = new Set<number>([ExitCode.config, ExitCode.expired]);


/** Codes that leave a user worth asking again as it was: not reached, or stopped before its first page. */
const RETRYABLE = new Set<number>([ExitCode.network, ExitCode.quota]);

/** Runs the jobs with bounded concurrency, writes records as pages arrive, and returns the summary (with the exit code). */
export async function runJobs(jobs: AsyncIterable<Job> | Iterable<Job>, options: RunOptions, ctx: RunContext): Promise<RunSummary> {
  return new JobRunner(options, ctx).run(jobs);
}

/** One run of jobs: the state they share (budget, summary, users left) and the steps of each. */
class JobRunner {
  private readonly budget: Budget;
  private readonly summary = new SummaryCollector();
  private readonly remaining: RemainingUsers;
  private readonly stops = new Set<StopReason>();
  /** Users who lost records to --limit: their --since-last mark must not move. */
  private readonly cut = new WeakSet<UserStats>();
  private totalRecords = 0;
  private failedInARow = 0;
  /** Users among `remaining` whose calls were made (they failed, or the run stopped them): the others were never tried. */
  private triedAndLeft = 0;
  /** --limit or --max-credits is met: no further user is started. */
  private budgetMet = false;
  /** A store the run keeps could not be written (a full disk, no descriptor left): no further user is started, as it would be paid for and not kept. */
  private storeFailed = false;
  /** The trial limit that stopped the run: said once, by its ending. */
  private quota?: SgqError;
  private taken = 0;
  /** What the progress line shows (progress.ts). */
  private readonly shown = { pages: 0, usersDone: 0, user: null as string | null, since: Date.now() };
  private readonly bounds: RunBounds;
  /** The last page written had to wait for the reader: fetch no further ahead than the next page. */
  private outputSlow = false;

  constructor(
    private readonly options: RunOptions,
    private readonly ctx: RunContext,
  ) {
    this.budget = new Budget({ limit: options.limit, maxCredits: options.maxCredits, knownCost: options.knownCost, trusted: options.priceTrusted, onPrice: options.onPrice, watch: options.watch });
    this.remaining = new RemainingUsers(options.remainingFile);
    this.bounds = { limit: options.limit, maxCredits: options.maxCredits, users: options.users };
  }

  /** The progress line for `width` columns: counts, credits spent and left, and with a bound, a bar and the time left. */
  private progressLine(width: number): string {
    const { pages, usersDone, user, since } = this.shown;
    const counts = { pages, usersDone, user, records: this.totalRecords, credits: this.budget.creditsUsed, creditsLeft: this.budget.creditsLeft, elapsedMs: Date.now() - since };
    return fitLine(progressParts(this.options.label, this.bounds, counts), width);
  }

  async run(jobs: AsyncIterable<Job> | Iterable<Job>): Promise<RunSummary> {
    const { sink, formatter, reporter } = this.ctx;
    await reporter.startProgress(`${this.options.label}: starting`);
    reporter.trackProgress((width) => this.progressLine(width));
    if (this.options.openingBalance && this.budget.wantsOpeningBalance) await this.budget.openWith(this.options.openingBalance);
    const source = isAsync(jobs) ? jobs[Symbol.asyncIterator]() : jobs[Symbol.iterator]();
    await Promise.all(Array.from({ length: this.options.concurrency }, () => this.worker(source)));
    // The users never started, for the resume (not when the reader went away: nobody wants them).
    if (!sink.closed) {
      for (let item = await source.next(); !item.done; item = await source.next()) {
        this.taken++;
        this.remaining.add(item.value.user);
      }
    }
    await source.return?.();
    reporter.stopProgress();
    if (!sink.closed) {
      await formatter.end();
      const lost = await this.ctx.onJobsDone?.();
      if (lost) this.leaveLost(lost);
    }
    return this.conclude();
  }

  private startable(): boolean {
    return !this.ctx.controller.signal.aborted && !this.ctx.sink.closed && !this.budgetMet && !this.storeFailed;
  }

  private async worker(source: Iterator<Job> | AsyncIterator<Job>): Promise<void> {
    while (this.startable()) {
      const item = await source.next();
      if (item.done) return;
      const order = this.taken++;
      const job = item.value;
      const stat: UserStats = { user: job.user, pages: 0, records: 0, calls: 0, extraCalls: 0, cachedPages: 0, errors: [], exitCode: ExitCode.ok };
      if (!this.startable()) {
        this.remaining.add(job.user);
        break;
      }
      const ran = await this.runJob(job, stat);
      this.shown.usersDone++;
      if (!ran) continue;
      this.watchReachability(stat);
      this.summary.add(order, stat);
      // What this job staged may be committed now, if the output that holds it is durable.
      const lost = await this.ctx.onJobEnd?.();
      if (lost) this.leaveLost(lost);
    }
  }

  /** Runs one job; false when it was stopped before it asked anything (it is left for the resume). */
  private async runJob(job: Job, stat: UserStats): Promise<boolean> {
    if (job.onStart && !(await this.startJob(job, stat))) return true;
    if (job.request.follow) this.bounds.maxPages ??= job.request.maxPages;
    const { controller, sink } = this.ctx;
    const pages = this.pagesOf(job, stat, () => (progress.tried = true));
    const progress: JobProgress = { next: null, cutShort: 'the run stopped before its last page', asOf: this.options.startedAt, tried: false };
    try {
      for (;;) {
        if (controller.signal.aborted || sink.closed) break;
        const result = await pages.next();
        if (result.done) return this.endOfPages(job, stat, result.value, progress);
        await this.writePage(job, stat, result.value, progress);
      }
    } catch (error) {
      if (!(error instanceof StoppedError || controller.signal.aborted)) {
        progress.cutShort = 'it failed';
        this.reportFailure(job, stat, error);
        return true;
      }
    } finally {
      await pages.return('done').catch(() => undefined);
      if (job.onEnd) await this.endJob(job, stat, progress.cutShort);
    }
    return this.stopped(job, stat, progress);
  }

  /** The pages of a job: its request's, or tonight's since and, if the service does not honour it, the whole list (since-night.ts). */
  private pagesOf(job: Job, stat: UserStats, onCall: () => void): AsyncGenerator<FetchedPage, StopReason> {
    const fetch = (request: PageRequest) =>
      fetchPages(this.ctx.client, request, this.budget, {
        signal: this.ctx.controller.signal,
        parallel: this.options.parallel,
        onExtraCall: () => stat.extraCalls++,
        onCall,
        onNote: (line) => this.ctx.reporter.trace(`${prefix(job)}${line}`),
        holdBack: () => this.outputSlow,
      });
    const night = job.night?.();
    if (!night || night.whole) return fetch(job.request);
    return sinceNightPages(night, job.request, fetch, {
      dropped: (page) => {
        if (isBilled(page)) stat.calls++;
        this.budget.returnRecords(page.granted);
      },
      fellBack: (why) => this.ctx.reporter.warn(`${prefix(job)}${why}; its whole list is fetched tonight`),
    });
  }

  /** A job's hook before its first request (--snapshot locks the user's folder); false when it refused. */
  private async startJob(job: Job, stat: UserStats): Promise<boolean> {
    try {
      await job.onStart!();
      return true;
    } catch (error) {
      this.reportFailure(job, stat, error);
      return false;
    }
  }

  /** The pages ran out: the job fetched everything (its claim is staged), or stopped at a limit. */
  private endOfPages(job: Job, stat: UserStats, reason: StopReason, progress: JobProgress): boolean {
    if (reason === 'limit' || reason === 'max-credits') this.budgetMet = true;
    if (reason !== 'done') {
      this.stops.add(reason);
      progress.cutShort = `it stopped at --${reason === 'more' ? 'all (one page only)' : reason}`;
      // The user's next pages are paid for with a new budget: say how to ask for them.
      if (reason === 'max-credits' && progress.next !== null && this.resumeFrom(job, stat, progress.next)) {
        this.ctx.reporter.info(`sgq: ${prefix(job)}stopped before page ${progress.next}; with a new budget, resume with: ${stat.resume}`);
      }
    } else if (stat.exitCode === ExitCode.ok && !this.cut.has(stat)) {
      progress.cutShort = undefined;
      job.onComplete?.(progress.asOf);
    } else {
      progress.cutShort = 'the service answered with errors';
    }
    if (stat.pages === 0 && reason !== 'done' && reason !== 'more') {
      this.remaining.add(job.user);
      return false;
    }
    return true;
  }

  /** Stopped by an abort or a closed output before it was done; one stopped during its first call was tried. */
  private stopped(job: Job, stat: UserStats, { next, tried }: JobProgress): boolean {
    if (this.ctx.sink.closed) return true;
    if (stat.pages === 0) {
      this.remaining.add(job.user);
      if (tried) this.triedAndLeft++;
      return false;
    }
    if (next !== null && this.resumeFrom(job, stat, next)) this.ctx.reporter.error(`${prefix(job)}stopped before page ${next}; resume with: ${stat.resume}`);
    return true;
  }

  private async writePage(job: Job, stat: UserStats, page: FetchedPage, progress: JobProgress): Promise<void> {
    const { sink, reporter } = this.ctx;
    this.ctx.onAnswer?.(page);
    stat.pages++;
    if (isBilled(page)) stat.calls++;
    if (page.cached) stat.cachedPages++;
    // A page from the cache holds the list as it was when it was asked: a mark claims no later.
    if (page.askedAt !== undefined && page.askedAt < progress.asOf.getTime()) progress.asOf = new Date(page.askedAt);
    for (const message of page.errors) {
      stat.errors.push(message);
      stat.exitCode = worstExitCode([stat.exitCode, ExitCode.service]);
      reporter.error(`${prefix(job)}the service answered: ${message}`);
    }
    if (this.options.include) sink.write(statusAndHeaders(page));
    if (this.options.raw) sink.write(`${compact(page.text)}\n`);
    else await this.writeRecords(job, stat, page);
    stat.records += page.granted;
    this.totalRecords += page.granted;
    this.shown.pages++;
    this.shown.user = job.user;
    progress.next = job.request.follow ? page.nextPage : null;
    this.outputSlow = sink.streams && !sink.flushed;
    await sink.drain();
  }

  private async writeRecords(job: Job, stat: UserStats, page: FetchedPage): Promise<void> {
    // A page cut by --limit leaves records unfetched, even if it was the user's last.
    if (page.granted < page.records.length) this.cut.add(stat);
    let records: JsonObject[] = page.granted < page.records.length ? page.records.slice(0, page.granted) : page.records;
    if (job.onRecords) await job.onRecords(records, page.lossless, { text: page.text, granted: records.length, wholeBodyIsRecord: job.request.wholeBodyIsRecord === true, lossless: page.lossless, keptTokens: page.keptTokens });
    if (job.hideRecords) records = [];
    await this.ctx.formatter.write(this.tagged(job, records), page.lossless);
  }

  private tagged(job: Job, records: JsonObject[]): JsonObject[] {
    return this.options.tagUser && job.user !== null ? records.map((r) => ({ query_user: job.user, ...r })) : records;
  }

  /** The per-user resume of a job stopped after some of its pages. */
  private resumeFrom(job: Job, stat: UserStats, page: number): string | undefined {
    if (!this.options.resume) return undefined;
    stat.resume = this.options.resume({ users: [job.user] }, this.continuation(page, stat.pages));
    return stat.resume;
  }

  private continuation(page?: number, pagesDone?: number): Continuation {
    const limit = this.budget.recordsLeft;
    const maxCredits = this.budget.maxCreditsLeft;
    return {
      page,
      pagesDone,
      limit: this.options.limit !== undefined && limit > 0 ? limit : undefined,
      // What is left after a stop at --max-credits pays for no call: the resume takes a new budget.
      maxCredits: maxCredits !== undefined && maxCredits > 0 && !this.stops.has('max-credits') ? maxCredits : undefined,
      format: this.options.format,
      columns: this.ctx.formatter.columns,
      headerWritten: this.ctx.formatter.headerWritten ?? false,
      outputComplete: false,
    };
  }

  /** Hands a job's end to its hook (--snapshot stages or refuses it; --changes prints what changed). */
  private async endJob(job: Job, stat: UserStats, cutShort: string | undefined): Promise<void> {
    const { sink, formatter, reporter } = this.ctx;
    const emit = async (records: JsonObject[], lossless: boolean) => {
      if (sink.closed) return;
      await formatter.write(this.tagged(job, records), lossless);
      await sink.drain();
    };
    try {
      await job.onEnd!({ cutShort, credits: stat.calls * this.budget.estimatedCost(), emit, reporter });
    } catch (error) {
      const sgq = cliError(error);
      stat.exitCode = worstExitCode([stat.exitCode, sgq.exitCode]);
      stat.errors.push(sgq.message);
      reporter.error(`${prefix(job)}${sgq.message}`, sgq.hint);
      this.leaveIfNotKept(job, sgq);
    }
  }

  /** A commit failed: nothing is kept from then on. No further user is started; those whose staged results it dropped are left for the resume. */
  private leaveLost(users: readonly (string | null)[]): void {
    this.storeFailed = true;
    for (const user of users) {
      this.remaining.add(user);
      this.triedAndLeft++;
    }
  }

  /**
   * A user whose results a store could not keep (src/fs/file-errors.ts) is left for the resume, and
   * the run starts no further user: each would be paid for and not kept either.
   */
  private leaveIfNotKept(job: Job, sgq: SgqError): boolean {
    if (!(sgq instanceof FileError)) return false;
    this.storeFailed = true;
    this.remaining.add(job.user);
    this.triedAndLeft++;
    return true;
  }

  private reportFailure(job: Job, stat: UserStats, error: unknown): void {
    const { reporter, controller } = this.ctx;
    const failure = error instanceof PageFailure ? error : undefined;
    const sgq = cliError(failure ? failure.error : error);
    stat.exitCode = worstExitCode([stat.exitCode, sgq.exitCode]);
    stat.errors.push(sgq.message);
    const who = prefix(job);
    const where = failure?.page != null && job.request.follow && failure.page > job.request.startPage ? `page ${failure.page} failed: ` : '';
    // A trial limit stops the run: the run's ending says it once, with the users left.
    if (sgq.exitCode === ExitCode.quota) this.quota ??= sgq;
    else if (sgq instanceof CallError && sgq.records.length > 0) {
      for (const record of sgq.records) reporter.error(`${who}the service answered: ${record}`);
    } else {
      reporter.error(`${who}${where}${sgq.message}`, sgq.hint);
    }
    if (this.leaveIfNotKept(job, sgq)) return;
    if (where && failure?.page != null && this.resumeFrom(job, stat, failure.page)) {
      reporter.error(`${who}records before page ${failure.page} were written; resume with: ${stat.resume}`);
    } else if (stat.pages === 0 && RETRYABLE.has(sgq.exitCode)) {
      this.remaining.add(job.user);
      this.triedAndLeft++;
    }
    if (FATAL_FOR_ALL.has(sgq.exitCode)) controller.abort('fatal');
    else if (sgq.exitCode === ExitCode.quota && !controller.signal.aborted) controller.abort('quota');
  }

  /** Counts users failing in a row on the network; enough of them stop the run. */
  private watchReachability(stat: UserStats): void {
    const { controller } = this.ctx;
    if (stat.exitCode === ExitCode.network && stat.pages === 0) this.failedInARow++;
    else if (stat.exitCode === ExitCode.ok || stat.pages > 0) this.failedInARow = 0;
    if (this.failedInARow >= UNREACHABLE_AFTER && !controller.signal.aborted) controller.abort('unreachable');
  }

  /** The exit code, the lines that say why the run stopped and how to resume, and the summary. */
  private conclude(): RunSummary {
    return concludeRun(
      { remaining: this.remaining, triedAndLeft: this.triedAndLeft, stops: this.stops, budgetMet: this.budgetMet, taken: this.taken, summary: this.summary, budget: this.budget, quota: this.quota },
      this.options,
      { reporter: this.ctx.reporter, signal: this.ctx.controller.signal, readerGone: this.ctx.sink.closed, continuation: () => this.continuation() },
    );
  }
}

/** Where one job stands, as its pages are written. */
interface JobProgress {
  /** The page to ask next, once a page was written. */
  next: number | null;
  /** Why the job did not fetch everything (for --snapshot); undefined once it did. */
  cutShort: string | undefined;
  /** The instant its records are complete as of: the run's start, or the oldest cached answer's. */
  asOf: Date;
  /** A call was made for it (it reached the service, or failed on the way). */
  tried: boolean;
}

const isAsync = (jobs: AsyncIterable<Job> | Iterable<Job>): jobs is AsyncIterable<Job> => Symbol.asyncIterator in jobs;

/** `user: ` before a message about one job; nothing for routes without a subject. */
const prefix = (job: Job): string => (job.user === null ? '' : `${job.user}: `);

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
