import { usageError } from './errors.js';
import { ROUTES, findRouteByPath, normalizeRoutePath } from './routes.js';

// What one call of a route costs, and who says so. One rule, used by dry runs, budgets and
// the summary: the `prices` setting (SGQ_PRICES) > the price sgq observed on this profile >
// the service's public credit table (routes.ts) > nothing known. The setting wins over an
// observation because it is what the user states (a contract, a price change sgq has not
// seen); an observation wins over the public table because it was measured on this account.

export type PriceSource = 'setting' | 'observed' | 'public' | 'assumed';

export interface Price {
  /** Credits per call that returns data. */
  credits: number;
  source: PriceSource;
}

/** When the public credit table in routes.ts was read. */
export const PUBLIC_PRICES_READ = '2026-11-24';

/** The most a call may be said to cost: a typo of a few digits is refused, not budgeted with. */
const MAX_PRICE = 1_000_000;

/**
 * Reads `route=credits` pairs separated by commas (`graph/get_followers=5,metadata/get_tweets=2`).
 * Throws a usage error naming the first bad pair: a route the table does not know, or a
 * price that is not a whole number of credits.
 */
export function parsePrices(text: string): Map<string, number> {
  const prices = new Map<string, number>();
  for (const raw of text.split(',')) {
    const pair = raw.trim();
    if (pair === '') continue;
    const bad = (why: string) => usageError(`invalid prices pair ${JSON.stringify(pair)}: ${why}`, 'give route=credits pairs separated by commas, such as graph/get_followers=5,metadata/get_tweets=2');
    const at = pair.indexOf('=');
    if (at <= 0) throw bad('it is not route=credits');
    const path = normalizeRoutePath(pair.slice(0, at));
    const credits = pair.slice(at + 1).trim();
    if (!findRouteByPath(path)) throw bad(`no route ${path}; routes: ${ROUTES.map((r) => r.path).join(', ')}`);
    if (!/^\d+$/.test(credits) || Number(credits) > MAX_PRICE) throw bad(`the price must be a whole number of credits from 0 to ${MAX_PRICE.toLocaleString('en-US')}`);
    if (prices.has(path)) throw bad(`${path} is priced twice`);
    prices.set(path, Number(credits));
  }
  return prices;
}

/** The price of a route's call by the rule above; null when nothing states it (a route `sgq api` does not know). */
export function priceOf(path: string, given: { setting?: string; observed?: number }): Price | null {
  const route = findRouteByPath(path);
  const set = given.setting === undefined ? undefined : parsePrices(given.setting).get(normalizeRoutePath(path));
  if (set !== undefined) return { credits: set, source: 'setting' };
  if (given.observed !== undefined) return { credits: given.observed, source: 'observed' };
  if (route?.cost == null) return null;
  return { credits: route.cost, source: route.costAssumed ? 'assumed' : 'public' };
}

/** Where a price comes from, in words for messages: `price: …`. */
export function priceOrigin(price: Price): string {
  switch (price.source) {
    case 'setting':
      return 'the prices setting';
    case 'observed':
      return 'observed on this profile';
    case 'public':
      return `the service's public credit table, read ${PUBLIC_PRICES_READ}`;
    case 'assumed':
      return "sgq's assumption, the public credit table gives none";
  }
}
