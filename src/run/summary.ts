import type { Reporter } from '../output/reporter.js';
import type { Budget } from './budget.js';

/** What one job did; filled in by the runner as pages arrive. */
export interface UserStats {
  user: string | null;
  pages: number;
  records: number;
  /** Calls the service billed (answers that carried records or a balance). */
  calls: number;
  errors: string[];
  exitCode: number;
  resume?: string;
}

/** The run summary; its JSON form (`--summary json`) is a contract for scripts. */
export interface RunSummary {
  users: {
    user: string | null;
    pages: number;
    records: number;
    credits_used: number;
    errors: string[];
    exit_code: number;
    resume?: string;
  }[];
  totals: { users: number; failed: number; pages: number; records: number; credits_used: number; credits_left: number | null };
  exit_code: number;
}

export function buildSummary(stats: readonly UserStats[], budget: Budget, exitCode: number): RunSummary {
  const perCall = budget.estimatedCost();
  const users = stats.map((s) => ({
    user: s.user,
    pages: s.pages,
    records: s.records,
    credits_used: s.calls * perCall,
    errors: s.errors,
    exit_code: s.exitCode,
    ...(s.resume ? { resume: s.resume } : {}),
  }));
  return {
    users,
    totals: {
      users: stats.length,
      failed: stats.filter((s) => s.exitCode !== 0).length,
      pages: stats.reduce((sum, s) => sum + s.pages, 0),
      records: stats.reduce((sum, s) => sum + s.records, 0),
      credits_used: budget.creditsUsed,
      credits_left: budget.creditsLeft,
    },
    exit_code: exitCode,
  };
}

/** The summary for people: a line per user when there are several, then the totals. */
export function formatSummary(summary: RunSummary, reporter: Reporter): string {
  const count = (v: number, noun: string) => `${v.toLocaleString('en-US')} ${noun}${v === 1 ? '' : 's'}`;
  const { totals } = summary;
  const lines: string[] = [];
  if (summary.users.length > 1) {
    for (const u of summary.users) {
      const state = u.errors.length ? reporter.color.red(`failed: ${u.errors[0]}`) : 'ok';
      lines.push(`  ${u.user}: ${count(u.pages, 'page')}, ${count(u.records, 'record')}, ${count(u.credits_used, 'credit')}, ${state}`);
    }
  }
  const left = totals.credits_left === null ? '' : `, ${count(totals.credits_left, 'credit')} left`;
  lines.push(`${reporter.color.bold('sgq:')} ${count(totals.pages, 'page')}, ${count(totals.records, 'record')}, ${count(totals.credits_used, 'credit')} used${left}`);
  return lines.join('\n');
}
