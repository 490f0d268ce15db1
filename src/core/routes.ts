// The one table of the service's routes (spec §4, §8). Commands, the sandbox, completions
// and the README's command list are all generated from it.

import type { RecordsName } from './record-fields.js';
import { NAMESPACES, TOP_LEVEL_VERBS } from './route-words.js';

export { NAMESPACES } from './route-words.js';

export type Subject = 'user' | 'list' | 'none';

export interface RouteSpec {
  /** Namespace as in the URL; '' is the default namespace that holds /info. */
  namespace: (typeof NAMESPACES)[number] | '';
  /** The sgq verb: `sgq <namespace> <verb>`, or `sgq <verb>` in the default namespace. */
  verb: string;
  /** Path below `{base_url}/api/`. */
  path: string;
  paginated: boolean;
  needsKey: boolean;
  /**
   * Credits per call that returns data: the service's public credit table (read 2026-11-24),
   * or sgq's assumption where the table has no figure (`costAssumed`). Null only for routes
   * sgq does not know (`sgq api`). The `prices` setting and observed prices override it (prices.ts).
   */
  cost: number | null;
  /** The public credit table gives no price for the route: `cost` is sgq's assumption (README "Prices"). */
  costAssumed: boolean;
  /** The most records a page holds where that is known (graph routes: 500, spec §4.1); null where it is not published. */
  pageSize: number | null;
  /** Accepts the `since` body field (spec §4.1). */
  since: boolean;
  /** A follower-style list that `--snapshot` can keep and `sgq diff` compare. */
  snapshot: boolean;
  /** What the positional argument names. */
  subject: Subject;
  /**
   * Sends `page: 1` though the route has no pages: the service's public clients send it to the
   * routes the spec does not describe (an assumption, said in docs/requests.md).
   */
  pageOne: boolean;
  /** Spec §2.3: answers with the `{message}` placeholder for now. */
  placeholder: boolean;
  /** The fields of its records (record-fields.ts): the library's record type and the schema come from it. */
  records: RecordsName;
  summary: string;
}

type Defaulted = 'since' | 'placeholder' | 'snapshot' | 'costAssumed' | 'pageSize' | 'pageOne';

// `const`: each route keeps its literal namespace, verb and records, from which the library's
// client type is computed (client-type.ts), so a route added here is a typed method.
const route = <const R extends Omit<RouteSpec, Defaulted> & Partial<Pick<RouteSpec, Defaulted>>>(r: R) => ({
  since: false as boolean,
  pageSize: null as number | null,
  costAssumed: false as boolean,
  snapshot: false as boolean,
  placeholder: false as boolean,
  pageOne: false as boolean,
  ...r,
});

export const ROUTES = [
  route({ namespace: 'graph', verb: 'followers', path: 'graph/get_followers', records: 'followers', paginated: true, needsKey: true, cost: 3, pageSize: 500, since: true, snapshot: true, subject: 'user', summary: 'Followers of an account' }),
  route({ namespace: 'graph', verb: 'following', path: 'graph/get_following', records: 'following', paginated: true, needsKey: true, cost: 3, pageSize: 500, since: true, snapshot: true, subject: 'user', summary: 'Accounts an account follows' }),
  route({ namespace: 'alpha', verb: 'score-history', path: 'alpha/get_score_history', records: 'scores', paginated: true, needsKey: true, cost: 1, costAssumed: true, subject: 'user', summary: 'Score history of an account' }),
  route({ namespace: 'alpha', verb: 'classification', path: 'alpha/get_classification', records: 'classification', paginated: false, needsKey: true, cost: 1, costAssumed: true, pageOne: true, subject: 'user', summary: 'Classification of an account' }),
  route({ namespace: 'metadata', verb: 'history', path: 'metadata/get_metadata_history', records: 'metadata', paginated: true, needsKey: true, cost: 2, subject: 'user', summary: 'Metadata history of an account' }),
  route({ namespace: 'metadata', verb: 'tweets', path: 'metadata/get_tweets', records: 'posts', paginated: true, needsKey: true, cost: 1, subject: 'user', summary: 'Posts of an account' }),
  route({ namespace: 'metadata', verb: 'latest-tweets', path: 'metadata/get_latest_tweets', records: 'posts', paginated: false, needsKey: true, cost: 6, subject: 'user', summary: 'Latest posts of an account (6 credits a call)' }),
  route({ namespace: 'metadata', verb: 'userid', path: 'metadata/get_userid', records: 'userid', paginated: false, needsKey: false, cost: 0, subject: 'user', summary: 'User id of an account (free, no key needed)' }),
  // The routes of the public credit table that the spec does not describe (with classification
  // above, whose price the stored copy of the table cuts off): one call each, the body the
  // public clients send.
  route({ namespace: 'metadata', verb: 'follower-count', path: 'metadata/get_follower_count', records: 'followerCount', paginated: false, needsKey: true, cost: 2, pageOne: true, subject: 'user', summary: 'Follower count of an account (2 credits a call)' }),
  route({ namespace: 'metadata', verb: 'past-usernames', path: 'metadata/get_past_usernames', records: 'pastUsernames', paginated: false, needsKey: true, cost: 3, pageOne: true, subject: 'user', summary: 'Usernames an account had before (3 credits a call)' }),
  route({ namespace: 'metadata', verb: 'latest', path: 'metadata/get_latest_metadata', records: 'account', paginated: false, needsKey: true, cost: 1, pageOne: true, subject: 'user', summary: 'Latest metadata of an account (1 credit a call)' }),
  route({ namespace: 'metadata', verb: 'current', path: 'metadata/get_current_metadata', records: 'account', paginated: false, needsKey: true, cost: 6, pageOne: true, subject: 'user', summary: 'Current metadata of an account (6 credits a call)' }),
  route({ namespace: 'metadata', verb: 'current-followers', path: 'metadata/get_current_num_followers', records: 'followerCount', paginated: false, needsKey: true, cost: 6, pageOne: true, subject: 'user', summary: 'Current number of followers of an account (6 credits a call)' }),
  route({ namespace: 'metadata', verb: 'current-following', path: 'metadata/get_current_num_following', records: 'followingCount', paginated: false, needsKey: true, cost: 6, pageOne: true, subject: 'user', summary: 'Current number of accounts an account follows (6 credits a call)' }),
  route({ namespace: 'metadata', verb: 'current-tweets', path: 'metadata/get_current_num_tweets', records: 'tweetCount', paginated: false, needsKey: true, cost: 6, pageOne: true, subject: 'user', summary: 'Current number of posts of an account (6 credits a call)' }),
  route({ namespace: 'lists', verb: 'members', path: 'lists/get_list_members', records: 'open', paginated: false, needsKey: true, cost: 1, subject: 'list', placeholder: true, summary: 'Members of a list (not available yet)' }),
  route({ namespace: 'lists', verb: 'latest-tweets', path: 'lists/get_latest_list_tweets', records: 'open', paginated: false, needsKey: true, cost: 1, subject: 'list', placeholder: true, summary: 'Latest posts of a list (not available yet)' }),
  route({ namespace: '', verb: 'info', path: 'info', records: 'open', paginated: false, needsKey: false, cost: 0, subject: 'none', summary: 'Service information (free, no key needed)' }),
] as const satisfies readonly RouteSpec[];

// route-words.ts names the namespaces and the default namespace's verbs apart from the table:
// tsc fails here when they do not agree with it (a type, so no bundle carries the check).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Agree<T extends true> = T;
type _WordsAgree = [
  Agree<Same<(typeof ROUTES)[number]['namespace'], (typeof NAMESPACES)[number] | ''>>,
  Agree<Same<Extract<(typeof ROUTES)[number], { namespace: '' }>['verb'], (typeof TOP_LEVEL_VERBS)[number]>>,
];

export const namespaceSummary: Record<(typeof NAMESPACES)[number], string> = {
  graph: 'Followers and following lists',
  alpha: 'Score history and classification',
  metadata: 'Metadata, counts, past usernames, posts and user ids',
  lists: 'Lists (the service has not opened these routes yet)',
};

/** `graph followers`, or `info` for the default namespace. */
export const commandName = (r: RouteSpec): string => (r.namespace ? `${r.namespace} ${r.verb}` : r.verb);

/** The library's method for a verb: `followers`, `score-history` → `scoreHistory`. */
export const methodName = (verb: string): string => verb.replace(/-(\w)/g, (_, c: string) => c.toUpperCase());

/** A route's path as one folder name (`graph.get_followers`): the snapshot store's and the dataset's partitions. */
export const routeFolderName = (path: string): string => path.replaceAll('/', '.');

/** Accepts `graph/get_followers`, `/graph/get_followers` and `/api/graph/get_followers`. */
export function normalizeRoutePath(input: string): string {
  return input.trim().replace(/^\/+/, '').replace(/^api\//, '').replace(/\/+$/, '');
}

export function findRouteByPath(path: string): RouteSpec | undefined {
  const wanted = normalizeRoutePath(path);
  return ROUTES.find((r) => r.path === wanted);
}
