// What a route's call sends, built in one place for the library and the CLI.
import type { Json } from './json.js';
import type { PageRequest } from './paginate.js';
import type { RouteSpec } from './routes.js';

/** Who and what a route is asked about: the fields of the spec's request body (§4.1). */
export interface RouteCall {
  /** The account or list id; null for a route that takes no subject (`/info`). */
  user: string | null;
  /** How `user` is read (passed through; `username` is the spec's one known value). */
  how: string;
  /** The page asked for; null on routes without pages. */
  page: number | null;
  /** An ISO date-time, fixed before the run (graph routes only). */
  since?: string;
}

/** The body of one call: `{user, how, page, since}`, each field only where it applies. */
export function requestBody(route: RouteSpec, call: RouteCall): Record<string, Json> {
  return bodyOf(route, call.user, call.how, call.page, call.since);
}

function bodyOf(route: RouteSpec, user: string | null, how: string, page: number | null, since: string | undefined): Record<string, Json> {
  if (user === null || route.subject === 'none') return {};
  const body: Record<string, Json> = { user, how };
  if (page !== null) body.page = page;
  else if (route.pageOne) body.page = 1;
  if (since !== undefined) body.since = since;
  return body;
}

/** How far a route's pages are followed. */
export interface PageRange {
  startPage: number;
  /** Follow next_page until it is null (`--all`). */
  follow: boolean;
  maxPages?: number;
}

/** The request template of one subject of a route, as fetchPages takes it. */
export function routeRequest(route: RouteSpec, subject: Omit<RouteCall, 'page'>, range: PageRange): PageRequest {
  // Built per page of every user: no copy of the subject, which a batch of 100,000 users felt.
  const { user, how, since } = subject;
  return {
    path: route.path,
    payload: (page) => bodyOf(route, user, how, page, since),
    sendKey: route.needsKey,
    paginated: route.paginated,
    startPage: range.startPage,
    follow: range.follow,
    maxPages: range.maxPages,
    wholeBodyIsRecord: route.subject === 'none',
  };
}
