// The library's client type, computed from the route table (routes.ts): each route is a method
// of its namespace, named by its verb (`score-history` → `scoreHistory`), yielding records of
// the type its `records` describes. A route added to the table is a typed method, with no
// second list to keep in step.
import type { ResponseCache } from './client.js';
import type { Exchange, SgqHooks } from './hooks.js';
import type { SgqRecord, SgqValue } from './lossless.js';
import type { RecordNamed } from './record-types.js';
import type { ROUTES } from './routes.js';
import type { StopReason } from './paginate.js';
import type { Env } from './config.js';

/** Where calls go: what `createClient` resolves, or what a caller's own starter returns. */
export interface Endpoint {
  baseUrl: string;
  apiKey?: string;
  close?: () => Promise<void>;
}

export interface ClientOptions {
  /** The service address; else SGQ_BASE_URL, else the profile's `base-url`, else the public https://toto.oz.xyz. */
  baseUrl?: string;
  /** Else SGQ_API_KEY, else the profile's `api-key`. */
  apiKey?: string;
  /** Config profile; else SGQ_PROFILE, else `default`. */
  profile?: string;
  /** Environment read for settings and proxies (the public entry passes process.env). */
  env?: Env;
  /** Per-request time limit in milliseconds (default: the `timeout` setting, else 30 s). */
  timeout?: number;
  /** Retries of a transient failure (default: the `retries` setting, else 3). */
  retries?: number;
  /** Wait out a 429 whose Retry-After (in ms) is past the 60 s cap, up to this long. */
  maxWait?: number;
  /**
   * See each request, answer and retry: route, body, status, milliseconds, credits left, the
   * retry's number (the key is masked). A hook only watches: one that throws does not break
   * the call (it is reported once as a process warning, code SGQ_HOOK_FAILED).
   */
  hooks?: SgqHooks;
  /** Receives every exchange, the key masked (as `--trace` writes it). Kept for 2.x; `hooks` sees more. */
  onExchange?: (exchange: Exchange) => void;
  /** Answers to reuse (as `--cache`): a hit sends no request and spends nothing. */
  cache?: ResponseCache;
  /** Supplies the endpoint instead of the config (the public entry's `sandbox: true` uses it). */
  endpoint?: () => Promise<Endpoint>;
  /** Told (once per iteration) that a hook threw; the public entry emits a process warning. */
  hookFailed?: (message: string) => void;
}

export interface CallOptions {
  /** How `user` is read (default `username`; passed through). */
  how?: string;
  /** Graph routes: an ISO 8601 date-time or an age such as `7d`; checked before any request. */
  since?: string;
  /** First page (default 1). */
  page?: number;
  /** At most this many records in all. */
  limit?: number;
  /** At most this many pages. */
  maxPages?: number;
  /** Pages asked at once (default 1); pages past the end may cost up to parallel-1 extra calls. */
  parallel?: number;
  /** Stop before the credits spent would pass this. */
  maxCredits?: number;
  signal?: AbortSignal;
  /** Milliseconds per request, for this call. */
  timeout?: number;
  retries?: number;
}

/** One answer of a paginated route, as `pages()` yields it. */
export interface SgqPage<R = SgqRecord> {
  /** The page asked for (null on routes without pages). */
  page: number | null;
  nextPage: number | null;
  records: R[];
  /** Error records that came beside good ones (their `error` strings). */
  errors: string[];
  /** `current_credits` after the call, where reported. */
  creditsLeft: number | null;
}

/** What an iteration did, once it has ended. */
export interface IterationResult {
  /** 'done' when every page was fetched; else the limit that ended it first. */
  stoppedBy: Exclude<StopReason, 'more'>;
  pages: number;
  records: number;
  /** Calls made ahead (with `parallel`) that yielded nothing: past the end, or dropped at a stop. */
  extraCalls: number;
  creditsUsed: number;
  creditsLeft: number | null;
}

/** How far `toArray` goes: at least one of `limit`, `maxPages`, `maxCredits`, or `{ all: true }`. */
export type ToArrayCap = { all?: boolean; limit?: number; maxPages?: number; maxCredits?: number } & (
  | { all: true }
  | { limit: number }
  | { maxPages: number }
  | { maxCredits: number }
);

/** Records of every page, fetched lazily: a `break` sends no further request. */
export interface Records<R = SgqRecord> extends AsyncIterable<R> {
  /** The pages themselves, with page numbers and the balance. */
  pages(): AsyncIterable<SgqPage<R>>;
  /**
   * The records, collected into memory, up to a cap: on a paid API, fetching everything is
   * asked for by name (`{ all: true }`), as stripe-node's `autoPagingToArray` asks for a limit.
   * A cap here is added to the call's own options; the lower one wins.
   */
  toArray(cap: ToArrayCap): Promise<R[]>;
  /** Set when an iteration has ended. */
  readonly result: IterationResult | undefined;
}

type Route = (typeof ROUTES)[number];

/** `score-history` → `scoreHistory`, as `methodName` does at run time. */
export type MethodName<V extends string> = V extends `${infer Head}-${infer Tail}` ? `${Head}${Capitalize<MethodName<Tail>>}` : V;

/** The record type of a route, from the description its `records` names. */
export type RouteRecord<R extends Route> = RecordNamed<R['records']>;

type RouteMethod<R extends Route> = (subject: string, options?: CallOptions) => Records<RouteRecord<R>>;

type NamespaceMethods<N extends Route['namespace']> = {
  [R in Extract<Route, { namespace: N }> as MethodName<R['verb']>]: RouteMethod<R>;
};

type CallOnly = Pick<CallOptions, 'signal' | 'timeout' | 'retries'>;

/** The client: a namespace of methods per namespace of the route table, and `info`, `request`, `close`. */
export type SgqClient = { readonly [N in Exclude<Route['namespace'], ''>]: NamespaceMethods<N> } & {
  /** `/info`: the service's answer as one record. */
  info(options?: CallOnly): Promise<RouteRecord<Extract<Route, { namespace: '' }>>>;
  /** A raw call like `sgq api`: POST a body to any route, get the answer's body. */
  request(route: string, body?: Record<string, SgqValue>, options?: CallOnly): Promise<SgqRecord>;
  /** Closes the connection pool (and a sandbox the client started). Idle pools do not keep Node alive. */
  close(): Promise<void>;
};
