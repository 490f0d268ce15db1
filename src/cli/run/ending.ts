import { ExitCode, type SgqError } from '../../core/errors.js';
import type { Budget } from '../../core/budget.js';
import type { StopReason } from '../../core/paginate.js';
import type { Reporter } from '../stderr/reporter.js';
import type { Format } from '../formats/formats.js';
import type { RemainingUsers, ResumeSubjects } from './remaining.js';
import type { RunSummary, SummaryCollector } from './summary.js';
import { count, grouped } from '../../core/words.js';

// How a run of jobs ends: its exit code, the lines that say why it stopped, how many users
// failed and how many were never tried, where their list is, the command that resumes them
// all, and the summary.

/**
 * After this many users in a row fail with network or server errors (and none in between
 * succeeds), the service is taken to be down and no further user is started.
 */
export const UNREACHABLE_AFTER = 3;

/** What the runner saw, for the ending. */
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

/** What the ending needs of the run's options. */
export interface EndOptions {
  limit?: number;
  maxCredits?: number;
  /** The command that runs the rest of this run for some users; none where a route cannot be resumed. */
  resume?: (subjects: ResumeSubjects, from: Continuation) => string;
}

export interface RunState {
  /** Users not finished: never asked, stopped before their first page, or failed on the network. */
  remaining: RemainingUsers;
  /** Those of `remaining` whose calls were made (they failed, or the stop cut them short); the others were never tried. */
  triedAndLeft: number;
  stops: ReadonlySet<StopReason>;
  /** --limit or --max-credits was met. */
  budgetMet: boolean;
  /** Users taken from the input. */
  taken: number;
  summary: SummaryCollector;
  budget: Budget;
  /** The trial limit that stopped the run, if one did. */
  quota?: SgqError;
}

export interface RunEndContext {
  reporter: Reporter;
  /** Aborted with why the run stopped early: SIGINT, SIGTERM, 'fatal', 'unreachable', 'quota'. */
  signal: AbortSignal;
  /** The reader of stdout went away (`| head`): nobody wants a resume. */
  readerGone: boolean;
  continuation: () => Continuation;
}

interface Rest {
  resume: string;
  remaining: number;
  /** Where the users left are listed, when there were too many for a command line. */
  file?: string;
}

export function concludeRun(state: RunState, options: EndOptions, ctx: RunEndContext): RunSummary {
  const { reporter, signal } = ctx;
  const reason = signal.reason as unknown;
  const interrupted = reason === 'SIGINT' ? ExitCode.interrupted : reason === 'SIGTERM' ? ExitCode.terminated : undefined;
  const exitCode = interrupted ?? state.summary.worstExitCode;
  if (interrupted) reporter.error(`interrupted by ${String(reason)}; every record written so far is complete`);
  for (const stop of state.stops) if (stop !== 'limit' && stop !== 'max-credits') reporter.info(stopNote(stop, options));
  const rest = ctx.readerGone ? undefined : resumeRest(state, options, ctx, exitCode);
  if (reason === 'unreachable') reporter.error(`the service is unreachable: stopped after ${UNREACHABLE_AFTER} users failed in a row; ${leftText(state, rest)}`);
  else if (reason === 'quota' && state.quota) reporter.error(quotaText(state.quota, state, rest));
  else reportLeft(state, options, ctx, rest, interrupted !== undefined || reason === 'fatal');
  if (state.remaining.failure) reporter.error(state.remaining.failure);
  const retryAt = reason === 'quota' ? state.quota?.details.retryAt : undefined;
  return state.summary.build(state.budget, exitCode, retryAt === undefined ? rest : { ...rest, next_request_at: retryAt });
}

/** A trial limit met: the route, the limit and when to go on (the message says them), and the users left with their resume. */
function quotaText(quota: SgqError, state: RunState, rest: Rest | undefined): string {
  const left = state.remaining.count;
  if (left === 0) return `${quota.message}; try again then`;
  const users = `${count(left, 'user')} not finished`;
  if (!rest) return `${quota.message}; ${users}; ${state.remaining.failure ?? 'run them again then'}`;
  return `${quota.message}; ${users}${listedIn(rest)}; resume ${left === 1 ? 'it' : 'them'} then with: ${rest.resume}`;
}

/**
 * After an outage: how many users failed (their calls were made) and how many were never
 * tried, where the list of both is, and how to run them all again.
 */
function leftText(state: RunState, rest: Rest | undefined): string {
  const tried = state.triedAndLeft;
  const notTried = state.remaining.count - tried;
  const failed = `${count(tried, 'user')} failed`;
  const what = notTried === 0 ? failed : `${failed}, ${grouped(notTried)} ${notTried === 1 ? 'was' : 'were'} not attempted`;
  if (!rest) return `${what}; ${state.remaining.failure ?? 'try again later'}`;
  return `${what}${listedIn(rest)}; resume them with: ${rest.resume}`;
}

function reportLeft(state: RunState, options: EndOptions, ctx: RunEndContext, rest: Rest | undefined, stoppedEarly: boolean): void {
  const { reporter } = ctx;
  const { remaining } = state;
  const notTried = remaining.count - state.triedAndLeft;
  for (const stop of state.stops) {
    if (stop !== 'limit' && stop !== 'max-credits') continue;
    const left = notTried > 0 && rest ? `; ${count(notTried, 'user')} not attempted${listedIn(rest)}; with a new budget, resume them with: ${rest.resume}` : '';
    // The figures the stop was decided on: what was spent, and the price of the call not sent.
    const spent = stop === 'max-credits' ? ` (${count(state.budget.creditsUsed, 'credit')} spent, the next call costs ${count(state.budget.estimatedCost(), 'credit')})` : '';
    reporter.info(`${stopNote(stop, options)}${spent}${left}`);
  }
  if (state.budgetMet || !(stoppedEarly || state.taken > 1)) return;
  if (rest) reporter.error(`${count(remaining.count, 'user')} not finished${listedIn(rest)}; resume with: ${rest.resume}`);
  else if (stoppedEarly && remaining.count > 0 && !ctx.readerGone) reporter.error(`${count(remaining.count, 'user')} not finished; ${remaining.failure ?? 'run them again'}`);
}

function resumeRest(state: RunState, options: EndOptions, ctx: RunEndContext, code: number): Rest | undefined {
  const subjects = state.remaining.finish();
  if (!subjects || !options.resume) return undefined;
  return {
    resume: options.resume(subjects, { ...ctx.continuation(), outputComplete: code === ExitCode.ok }),
    remaining: state.remaining.count,
    file: 'file' in subjects ? subjects.file : undefined,
  };
}

/** `; their list is in FILE` when the users left did not fit a command line. */
const listedIn = (rest: Rest): string => (rest.file ? `; their list is in ${rest.file}` : '');


function stopNote(stop: StopReason, options: Pick<EndOptions, 'limit' | 'maxCredits'>): string {
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
