// The records of one page of a route, from the account's name alone (see records.ts for shapes).
import type { RouteSpec } from '../core/routes.js';
import { GRAPH_PAGE_SIZE, HISTORY_PAGE_SIZE, handle, hash, isoMicros, listSeed, relationCount, spacingSeconds, userId } from './data.js';
import { relationRecord, scoreRecord, type Shape } from './records.js';
import { accountItems } from './accounts.js';
import { arrivedSince, churnedList } from './churn.js';

export interface Generated {
  /** Objects, or (in the service's shape) records already written as JsonText. */
  items: unknown[];
  total: number;
  pageSize: number;
}

/**
 * The records of one page of a route, from the account's name alone; with `churn` (a daily
 * rate, churn.ts), follower and following lists also depend on the clock.
 */
export function generate(route: RouteSpec, user: string, how: string, page: number, sinceMs: number | undefined, now: Date, shape: Shape, churn = 0): Generated {
  const account = accountItems(route, user, how, now.getTime(), churn);
  if (account) return { items: account, total: account.length, pageSize: 0 };
  const seed = hash(user.toLowerCase());
  const anchor = now.getTime();
  const service = shape === 'service';
  const slice = (total: number, pageSize: number, make: (i: number) => unknown): Generated => {
    const items: unknown[] = [];
    for (let i = (page - 1) * pageSize; i < Math.min(total, page * pageSize); i++) items.push(make(i));
    return { items, total, pageSize };
  };
  switch (route.path) {
    case 'graph/get_followers':
    case 'graph/get_following': {
      const relation = route.path.endsWith('followers') ? 'followers' : 'following';
      if (churn > 0) return churnedPage(relation, user, page, sinceMs, anchor, service, churn);
      const spacing = spacingSeconds(user, relation) * 1000;
      let total = relationCount(user, relation);
      if (sinceMs !== undefined) total = sinceMs > anchor ? 0 : Math.min(total, Math.floor((anchor - sinceMs) / spacing) + 1);
      const people = listSeed(user, relation);
      // Sub-millisecond digits only, so a record's own timestamp sent back as `since` selects it.
      const micros = (i: number) => (people + i * 7919) % 1000;
      if (service) return slice(total, GRAPH_PAGE_SIZE, (i) => relationRecord(relation, people, i, handle(people, i), anchor - i * spacing, micros(i)));
      return slice(total, GRAPH_PAGE_SIZE, (i) => ({ username: handle(people, i), last_checked: isoMicros(anchor - i * spacing, micros(i)) }));
    }
    case 'alpha/get_score_history':
      return slice(365, HISTORY_PAGE_SIZE, (i) => scoreRecord(new Date(anchor - i * 86_400_000).toISOString().slice(0, 10), seed, i, service));
    case 'metadata/get_metadata_history': {
      const name = `${user} ${handle(seed, 0).split('_')[0]}`;
      const followers = relationCount(user, 'followers');
      return slice(1 + (seed % 250), HISTORY_PAGE_SIZE, (i) => ({
        username: user,
        name,
        description: i % 3 === 0 ? null : `bio version ${i}`,
        followers_count: Math.max(0, followers - i * 3),
        last_checked: isoMicros(anchor - i * 86_400_000, (seed + i) % 1_000_000),
      }));
    }
    case 'metadata/get_tweets':
      return slice(1 + (seed % 450), HISTORY_PAGE_SIZE, (i) => tweet(user, seed, i, anchor));
    case 'metadata/get_latest_tweets':
      return slice(10, 10, (i) => tweet(user, seed, i, anchor));
    case 'metadata/get_userid':
      return { items: [{ username: user, user_id: userId(user) }], total: 1, pageSize: 0 };
    default:
      return { items: [], total: 0, pageSize: 0 };
  }
}

/** A page of a list whose members come and go with the clock (churn.ts): its accounts are those of the list at `now`, newest first. */
function churnedPage(relation: 'followers' | 'following', user: string, page: number, sinceMs: number | undefined, now: number, service: boolean, churn: number): Generated {
  const people = listSeed(user, relation);
  const list = churnedList(people, relationCount(user, relation), churn, now);
  const total = sinceMs === undefined ? list.index.length : arrivedSince(list, sinceMs);
  const items: unknown[] = [];
  for (let k = (page - 1) * GRAPH_PAGE_SIZE; k < Math.min(total, page * GRAPH_PAGE_SIZE); k++) {
    const a = list.index[k]!;
    const micros = (people + a * 7919) % 1000;
    items.push(service ? relationRecord(relation, people, a, handle(people, a), list.at[k]!, micros) : { username: handle(people, a), last_checked: isoMicros(list.at[k]!, micros) });
  }
  return { items, total, pageSize: GRAPH_PAGE_SIZE };
}

function tweet(user: string, seed: number, i: number, anchor: number) {
  return {
    id: `${1700000000000000000n + BigInt(seed) * 1000n - BigInt(i)}`,
    text: `post ${i} by ${user}, "quoted", with a comma`,
    created_at: isoMicros(anchor - i * 3_600_000, 0),
    like_count: (seed >>> (i % 16)) % 500,
  };
}
