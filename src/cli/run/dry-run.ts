import { requestTarget, splitBaseUrl } from '../../core/client.js';
import { maskSecret, type ResolvedConfig } from '../../core/config.js';
import { ExitCode } from '../../core/errors.js';
import type { PageRequest } from '../../core/paginate.js';
import { priceOrigin, type Price } from '../../core/prices.js';
import { findRouteByPath } from '../../core/routes.js';
import type { Reporter } from '../stderr/reporter.js';
import type { SinceMarks } from './since-marks.js';
import type { Job } from './jobs.js';
import { count as plural, grouped } from '../../core/words.js';
import { BALANCE_BODY, BALANCE_ROUTE } from './balance-probe.js';
import { NightTally, nightLine } from './dry-run-nights.js';

// `--dry-run`: the requests a run would send and what it could cost at worst, from the jobs
// the run would build. Nothing is sent, so no key is needed and no credit spent.

export interface DryRunInput {
  config: ResolvedConfig;
  /** The sandbox's address is chosen when it starts: shown as a placeholder. */
  sandbox: boolean;
  jobs: AsyncIterable<Job> | Iterable<Job>;
  /** The price of a call (run-price.ts); null where nothing states it. */
  price: Price | null;
  maxCredits?: number;
  limit?: number;
  marks?: SinceMarks;
  /** A trial account's pace: the line saying how long the calls take at it, or nothing when unpaced. */
  pace?: (calls: number | null) => string | undefined;
  /** --full-every N above 1: each job's night is said, and what the night costs. */
  fullEvery?: number;
}

/** Request lines printed per user; a longer bound is summed up in one line. */
const PAGES_SHOWN = 20;

/** Prints the requests the run would send, then the worst case; returns the exit code. */
export async function dryRun(input: DryRunInput, reporter: Reporter): Promise<number> {
  const { config, limit } = input;
  const { origin, prefix } = input.sandbox ? { origin: 'http://127.0.0.1:PORT', prefix: '' } : splitBaseUrl(config.baseUrl);
  let users = 0;
  /** Calls at most; null once a user's pages have no known bound. */
  let calls: number | null = 0;
  let path = '';
  let pageSize: number | null = null;
  let placeholder = false;
  const keyOf = (sendKey: boolean | undefined) => (!sendKey ? '' : input.sandbox || config.apiKey ? ` (x-api-key ${input.sandbox ? 'sandbox demo key' : maskSecret(config.apiKey!)})` : ' (x-api-key: none configured)');
  if (readsBalanceFirst(input)) {
    const { target, body } = requestTarget(prefix, BALANCE_ROUTE, BALANCE_BODY, 'POST');
    reporter.raw(`sgq: would send POST ${origin}${target} ${body}${keyOf(true)} first, free: the balance before the first call, so that --max-credits counts that call as the balances measure it`);
  }
  const nights = new NightTally();
  for await (const job of input.jobs) {
    users++;
    const night = job.night?.();
    if (night) {
      reporter.raw(nightLine(job.user, night));
      nights.add(night);
    }
    const req = night && !night.whole ? night.request : job.request;
    path = req.path;
    const route = findRouteByPath(path);
    pageSize = route?.pageSize ?? null;
    placeholder = route?.placeholder === true;
    const method = (req.method ?? 'POST').toUpperCase();
    const key = keyOf(req.sendKey);
    const bound = pagesAtMost(req, limit, pageSize);
    const pages = !req.paginated ? [null] : Array.from({ length: Math.min(bound ?? 1, PAGES_SHOWN) }, (_, i) => req.startPage + i);
    for (const page of pages) {
      const { target, body } = requestTarget(prefix, req.path, req.payload(page), method);
      reporter.raw(`sgq: would send ${method} ${origin}${target}${body === undefined ? '' : ` ${body}`}${key}`);
    }
    if (bound === null) {
      reporter.raw(`sgq: … then page ${req.startPage + 1} and on, as long as next_page is set: how many is not known before the run`);
      calls = null;
    } else {
      if (bound > pages.length) reporter.raw(`sgq: … and so on up to page ${req.startPage + bound - 1}, as long as next_page is set`);
      if (calls !== null) calls += bound;
    }
  }
  // --limit holds for the whole run: full pages are shared out, and each user ends on one partial page.
  if (calls !== null && limit !== undefined && pageSize !== null && users > 1) calls = Math.min(calls, Math.ceil(limit / pageSize) + users - 1);
  const count = calls === null ? `at least ${plural(users, 'call')}, pages per user unknown` : `at most ${plural(calls, 'call')}`;
  reporter.raw(`sgq: dry run, nothing sent: ${users > 1 ? `${grouped(users)} users, ` : ''}${count}; worst case ${worstCase(calls, input.price, input.maxCredits, path)}${placeholder ? '; nothing while the route is not open (spec §2.3)' : ''}`);
  if (limit !== undefined) reporter.raw(`sgq: ${limitNote(limit, pageSize, path)}`);
  const nightsLine = input.fullEvery === undefined ? undefined : nights.line(input.fullEvery, input.price);
  if (nightsLine) reporter.raw(nightsLine);
  const pace = input.pace?.(calls);
  if (pace) reporter.raw(`sgq: ${pace}`);
  return ExitCode.ok;
}

/** Whether the run reads the balance before its first call (Budget.wantsOpeningBalance): under --max-credits, a paid route, a call that fits. */
function readsBalanceFirst({ maxCredits, price }: DryRunInput): boolean {
  return maxCredits !== undefined && price?.credits !== 0 && (price?.credits ?? 1) <= maxCredits;
}

/** The most calls one job can make: one page, --max-pages, or --limit over a known page size; null when unbounded. */
function pagesAtMost(req: PageRequest, limit: number | undefined, pageSize: number | null): number | null {
  if (!req.paginated || !req.follow) return 1;
  const byLimit = limit !== undefined && pageSize !== null ? Math.max(1, Math.ceil(limit / pageSize)) : undefined;
  const bounds = [req.maxPages, byLimit].filter((n): n is number => n !== undefined);
  return bounds.length ? Math.min(...bounds) : null;
}

function limitNote(limit: number, pageSize: number | null, path: string): string {
  const stops = `--limit ${limit} stops the run once ${plural(limit, 'record')} arrived`;
  if (pageSize !== null) return `${stops}; a page of ${path} holds up to ${pageSize}, so the bound assumes every page but a user's last is full`;
  return `${stops}; the records a page of ${path} holds are not published, so it bounds no call count`;
}

/** The most credits the run could spend, or why that is unknown: never a silent guess. */
export function worstCase(calls: number | null, price: Price | null, maxCredits: number | undefined, path: string): string {
  if (price?.credits === 0 || calls === 0) return '0 credits (the route is free)';
  if (calls !== null && price !== null) {
    const full = calls * price.credits;
    if (maxCredits !== undefined && maxCredits < full) return `${plural(maxCredits, 'credit')}, the --max-credits cap (${plural(full, 'credit')} without it)`;
    return `${plural(full, 'credit')} (${plural(calls, 'call')} × ${plural(price.credits, 'credit')}; price: ${priceOrigin(price)})`;
  }
  const unknown = [price === null ? `the price of ${path} is not known` : '', calls === null ? 'the number of pages is not known (--all without --max-pages or a --limit a page size bounds)' : ''].filter(Boolean).join(', and ');
  if (maxCredits !== undefined) return `${plural(maxCredits, 'credit')}, the --max-credits cap (${unknown}; sgq learns the price from the balances the service reports)`;
  return `unknown: ${unknown}; add --max-credits N to cap what the run may spend`;
}

