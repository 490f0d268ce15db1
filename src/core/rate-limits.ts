import { configError, usageError } from './errors.js';
import { ROUTES, normalizeRoutePath } from './routes.js';
import { positiveInt } from './values.js';
import { count } from './words.js';

// How many requests an hour a trial account may send to each route, and who says so. One
// rule, as for prices (prices.ts): the `rate-limits` setting (SGQ_RATE_LIMITS) > the limit the
// service stated in its refusal (`Max Requests Per Hour`) > the service's published limits.
// Paid accounts have none: these figures matter only under the `trial` plan (pace.ts).

/** When the published limits below were read (https://docs.totoml.app/rate-limits, service-facts.md). */
export const RATE_LIMITS_READ = '2026-11-28';

/**
 * The published per-route limits of trial accounts, in requests an hour. Beside the route
 * table rather than in it: some of these routes have no command yet (`sgq api` reaches them).
 */
export const PUBLISHED_RATE_LIMITS: Readonly<Record<string, number>> = {
  'graph/get_followers': 10,
  'graph/get_following': 10,
  'metadata/get_follower_count': 15,
  'metadata/get_latest_metadata': 10,
  'metadata/get_latest_tweets': 10,
  'metadata/get_past_usernames': 10,
  'alpha/get_classification': 10,
  'metadata/get_metadata_history': 20,
  'alpha/get_score_history': 20,
};

export type RateLimitSource = 'setting' | 'stated' | 'published';

export interface RateLimit {
  perHour: number;
  source: RateLimitSource;
}

/** The hour of the limits; SGQ_TRIAL_HOUR_MS shortens it for the tests (docs/development.md), never for users. */
export const HOUR_MS = 3_600_000;

/** The most requests an hour a route may be said to allow: a typo of a few digits is refused. */
const MAX_PER_HOUR = 1_000_000;

/** Routes a limit may be given for: the table's and those the published limits name. */
const knownRoutes = (): string[] => [...new Set([...ROUTES.map((r) => r.path), ...Object.keys(PUBLISHED_RATE_LIMITS)])];

/**
 * Reads `route=requests` pairs separated by commas (`graph/get_followers=10,alpha/get_score_history=20`).
 * Throws a usage error naming the first bad pair.
 */
export function parseRateLimits(text: string): Map<string, number> {
  const limits = new Map<string, number>();
  for (const raw of text.split(',')) {
    const pair = raw.trim();
    if (pair === '') continue;
    const bad = (why: string) => usageError(`invalid rate-limits pair ${JSON.stringify(pair)}: ${why}`, 'give route=requests pairs separated by commas, such as graph/get_followers=10,alpha/get_score_history=20');
    const at = pair.indexOf('=');
    if (at <= 0) throw bad('it is not route=requests');
    const path = normalizeRoutePath(pair.slice(0, at));
    const perHour = pair.slice(at + 1).trim();
    if (!knownRoutes().includes(path)) throw bad(`no route ${path}; routes: ${knownRoutes().join(', ')}`);
    if (!/^\d+$/.test(perHour) || Number(perHour) < 1 || Number(perHour) > MAX_PER_HOUR) throw bad(`the limit must be a whole number of requests an hour from 1 to ${MAX_PER_HOUR.toLocaleString('en-US')}`);
    if (limits.has(path)) throw bad(`${path} is limited twice`);
    limits.set(path, Number(perHour));
  }
  return limits;
}

/** The limit of a route's calls by the rule above; null when nothing states one. */
export function rateLimitOf(path: string, given: { setting?: string; stated?: number }): RateLimit | null {
  const route = normalizeRoutePath(path);
  const set = given.setting === undefined ? undefined : parseRateLimits(given.setting).get(route);
  if (set !== undefined) return { perHour: set, source: 'setting' };
  if (given.stated !== undefined) return { perHour: given.stated, source: 'stated' };
  const published = PUBLISHED_RATE_LIMITS[route];
  return published === undefined ? null : { perHour: published, source: 'published' };
}

/** Where a limit comes from, in words for messages. */
export function limitOrigin(limit: RateLimit): string {
  switch (limit.source) {
    case 'setting':
      return 'the rate-limits setting';
    case 'stated':
      return 'as the service stated it';
    case 'published':
      return `the service's published limits, read ${RATE_LIMITS_READ}`;
  }
}

/** `10 requests an hour`, `1 request an hour`. */
export const requestsAnHour = (n: number): string => `${count(n, 'request')} an hour`;

/** The length of the hour the limits count, in ms: an hour, or SGQ_TRIAL_HOUR_MS (a test hook). */
export function trialHourMs(env: Record<string, string | undefined>): number {
  const text = env.SGQ_TRIAL_HOUR_MS;
  if (!text) return HOUR_MS;
  try {
    return positiveInt('SGQ_TRIAL_HOUR_MS', HOUR_MS)(text);
  } catch {
    throw configError(`invalid SGQ_TRIAL_HOUR_MS ${JSON.stringify(text)}`, 'give milliseconds, such as 1500, or unset it');
  }
}
