import { requestTarget, splitBaseUrl } from '../../core/client.js';
import { maskSecret, type ResolvedConfig } from '../../core/config.js';
import { ExitCode } from '../../core/errors.js';
import type { Reporter } from '../output/reporter.js';
import type { SinceMarks } from './since-marks.js';
import type { Job } from './runner.js';

// `--dry-run`: the requests a run would send and what it could cost at worst, from the jobs
// the run would build. Nothing is sent, so no key is needed and no credit spent.

export interface DryRunInput {
  config: ResolvedConfig;
  /** The sandbox's address is chosen when it starts: shown as a placeholder. */
  sandbox: boolean;
  jobs: AsyncIterable<Job> | Iterable<Job>;
  /** Credits per call where known (route table); null where the service does not state it. */
  knownCost: number | null;
  maxCredits?: number;
  limit?: number;
  marks?: SinceMarks;
}

/** Prints one line per request the run would send, then the worst case; returns the exit code. */
export async function dryRun(input: DryRunInput, reporter: Reporter): Promise<number> {
  const { config } = input;
  const { origin, prefix } = input.sandbox ? { origin: 'http://127.0.0.1:PORT', prefix: '' } : config.baseUrl ? splitBaseUrl(config.baseUrl) : { origin: '{base-url}', prefix: '' };
  let users = 0;
  /** Calls at most; null once a user's pages have no known bound (--all without --max-pages). */
  let calls: number | null = 0;
  let path = '';
  for await (const job of input.jobs) {
    users++;
    const req = job.request;
    path = req.path;
    const method = (req.method ?? 'POST').toUpperCase();
    const key = !req.sendKey ? '' : input.sandbox || config.apiKey ? ` (x-api-key ${input.sandbox ? 'sandbox demo key' : maskSecret(config.apiKey!)})` : ' (x-api-key: none configured)';
    const pages = !req.paginated ? [null] : !req.follow ? [req.startPage] : Array.from({ length: req.maxPages ?? 1 }, (_, i) => req.startPage + i);
    for (const page of pages) {
      const { target, body } = requestTarget(prefix, req.path, req.payload(page), method);
      reporter.raw(`sgq: would send ${method} ${origin}${target}${body === undefined ? '' : ` ${body}`}${key}`);
    }
    if (req.paginated && req.follow && req.maxPages === undefined) {
      reporter.raw(`sgq: … then page ${req.startPage + 1} and on, as long as next_page is set: how many is not known before the run`);
      calls = null;
    } else if (calls !== null) {
      calls += pages.length;
    }
  }
  const count = calls === null ? `at least ${plural(users, 'call')}, pages per user unknown (--all without --max-pages)` : `at most ${plural(calls, 'call')}`;
  reporter.raw(`sgq: dry run, nothing sent: ${users > 1 ? `${users.toLocaleString('en-US')} users, ` : ''}${count}; worst case ${worstCase(calls, input.knownCost, input.maxCredits, path)}`);
  if (input.limit !== undefined) reporter.raw(`sgq: --limit ${input.limit} stops the run once ${plural(input.limit, 'record')} arrived; the records a page holds are not known before, so it bounds no call count`);
  return ExitCode.ok;
}

/** The most credits the run could spend, or why that is unknown: never a silent guess. */
export function worstCase(calls: number | null, price: number | null, maxCredits: number | undefined, path: string): string {
  if (price === 0 || calls === 0) return '0 credits (the route is free)';
  if (calls !== null && price !== null) {
    const full = calls * price;
    if (maxCredits !== undefined && maxCredits < full) return `${plural(maxCredits, 'credit')}, the --max-credits cap (${plural(full, 'credit')} without it)`;
    return `${plural(full, 'credit')} (${plural(calls, 'call')} × ${plural(price, 'credit')})`;
  }
  const unknown = [price === null ? `the service does not state the price of ${path}` : '', calls === null ? 'the number of pages is not known' : ''].filter(Boolean).join(', and ');
  if (maxCredits !== undefined) return `${plural(maxCredits, 'credit')}, the --max-credits cap (${unknown}; sgq learns it from the balances the service reports)`;
  return `unknown: ${unknown}; add --max-credits N to cap what the run may spend`;
}

const plural = (n: number, noun: string) => `${n.toLocaleString('en-US')} ${noun}${n === 1 ? '' : 's'}`;
