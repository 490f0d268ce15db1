import { ExitCode, worstExitCode } from '../../core/errors.js';
import type { Line } from '../stderr/reporter.js';
import type { Budget } from '../../core/budget.js';
import { count, grouped } from '../../core/words.js';

/** What one job did; filled in by the runner as pages arrive. */
export interface UserStats {
  user: string | null;
  pages: number;
  records: number;
  /** Calls the service billed (answers that carried records or a balance). */
  calls: number;
  /** Calls `--parallel` made ahead that wrote nothing (pages past the end, or dropped at a stop). */
  extraCalls: number;
  /** Pages answered from the cache (`--cache`): no request sent. */
  cachedPages: number;
  errors: string[];
  exitCode: number;
  resume?: string;
}

/**
 * Up to this many users the summary lists every user; beyond it, only users that failed (at
 * most FAILED_LISTED of them), so a run over a million users keeps a summary of bounded size.
 */
export const LIST_ALL_UP_TO = 1000;
export const FAILED_LISTED = 10_000;

/** The run summary; its JSON form (`--summary json`) is a contract for scripts. */
export interface RunSummary {
  users: {
    user: string | null;
    pages: number;
    records: number;
    credits_used: number;
    /** With --parallel: calls made ahead that wrote nothing (pages past the end, or dropped at a stop). */
    extra_calls?: number;
    errors: string[];
    exit_code: number;
    resume?: string;
  }[];
  /** Which users `users` holds: all of them, or (past LIST_ALL_UP_TO users) those that failed. */
  listed: 'all' | 'failed';
  totals: { users: number; failed: number; pages: number; records: number; extra_calls: number; credits_used: number; credits_left: number | null; cached_pages?: number };
  /** The command that runs the `remaining` users this run did not finish (not started, stopped, unreachable). */
  resume?: string;
  remaining?: number;
  /** A trial limit stopped the run: the earliest time its next request may go (ISO 8601 UTC). */
  next_request_at?: string;
  /** The prices this run measured from the balances, in credits a call by route: those later runs use. */
  prices?: Record<string, number>;
  exit_code: number;
}

/** Gathers the users' stats as they finish: totals for all, detail for as many as the summary lists. */
export class SummaryCollector {
  private readonly kept: { order: number; stat: UserStats }[] = [];
  private listedFailed = 0;
  users = 0;
  worstExitCode: number = ExitCode.ok;
  private failed = 0;
  private pages = 0;
  private records = 0;
  private extraCalls = 0;
  private cachedPages = 0;

  /** `order` is the user's place in the input, so the summary lists users in that order. */
  add(order: number, stat: UserStats): void {
    this.users++;
    this.pages += stat.pages;
    this.records += stat.records;
    this.extraCalls += stat.extraCalls;
    this.cachedPages += stat.cachedPages;
    const failed = stat.exitCode !== 0;
    if (failed) this.failed++;
    this.worstExitCode = worstExitCode([this.worstExitCode, stat.exitCode]);
    if (failed ? this.listedFailed < FAILED_LISTED : this.users <= LIST_ALL_UP_TO) {
      this.kept.push({ order, stat });
      if (failed) this.listedFailed++;
    }
    // Past the threshold the users that did well are dropped, once.
    if (this.users === LIST_ALL_UP_TO + 1) this.kept.splice(0, this.kept.length, ...this.kept.filter((k) => k.stat.exitCode !== 0));
  }

  build(budget: Budget, exitCode: number, rest?: { resume?: string; remaining?: number; next_request_at?: string }): RunSummary {
    const perCall = budget.estimatedCost();
    const total = budget.creditsUsed;
    // The balances measure the run, not each user: a lone user's figure is the run's, the others' are at the price.
    const creditsOf = (s: UserStats) => (this.users === 1 ? total : s.calls * perCall);
    const users = this.kept
      .sort((a, b) => a.order - b.order)
      .map(({ stat: s }) => ({
        user: s.user,
        pages: s.pages,
        records: s.records,
        credits_used: creditsOf(s),
        ...(s.extraCalls > 0 ? { extra_calls: s.extraCalls } : {}),
        errors: s.errors,
        exit_code: s.exitCode,
        ...(s.resume ? { resume: s.resume } : {}),
      }));
    return {
      users,
      listed: this.users > LIST_ALL_UP_TO ? 'failed' : 'all',
      totals: {
        users: this.users,
        failed: this.failed,
        pages: this.pages,
        records: this.records,
        extra_calls: this.extraCalls,
        credits_used: total,
        credits_left: budget.creditsLeft,
        ...(this.cachedPages ? { cached_pages: this.cachedPages } : {}),
      },
      ...rest,
      exit_code: exitCode,
    };
  }
}

/** The summary with the prices the run measured (`prices`), before `exit_code`, which stays last. */
export function withPrices(summary: RunSummary, prices: Record<string, number> | undefined): RunSummary {
  if (!prices) return summary;
  const { exit_code, ...rest } = summary;
  return { ...rest, prices, exit_code };
}

/** The summary for people: a line per listed user when there are several, then the totals. */
export function formatSummary(summary: RunSummary): Line[] {
  const { totals } = summary;
  const lines: Line[] = [];
  if (totals.users > 1) {
    for (const u of summary.users) {
      const state = u.errors.length ? { style: 'red' as const, text: `failed: ${u.errors[0]}` } : 'ok';
      lines.push([`  ${u.user}: ${count(u.pages, 'page')}, ${count(u.records, 'record')}, ${count(u.credits_used, 'credit')}, `, state]);
    }
    const unlisted = totals.users - summary.users.length;
    if (unlisted > 0) lines.push(`  (${count(unlisted, 'more user')} not listed; the totals count them)`);
  }
  const left = totals.credits_left === null ? '' : `, ${count(totals.credits_left, 'credit')} left`;
  const extra = totals.extra_calls > 0 ? `, ${count(totals.extra_calls, 'extra call')} (--parallel)` : '';
  const cached = totals.cached_pages ? ` (${grouped(totals.cached_pages)} from the cache)` : '';
  lines.push([{ style: 'bold', text: 'sgq:' }, ` ${count(totals.pages, 'page')}${cached}, ${count(totals.records, 'record')}${extra}, ${count(totals.credits_used, 'credit')} used${left}`]);
  return lines;
}
