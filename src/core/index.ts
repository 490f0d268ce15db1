// The library: one method per route of the table, over the same client, pages, budgets, retries
// and lossless JSON as the CLI. Nothing here runs at import: the config is read, the pool made
// and the sandbox (if asked for) started on the first call.
import { Budget } from './budget.js';
import { StoppedError, type ApiClient, type Exchange, type ResponseCache } from './client.js';
import { resolveConfig, type Env } from './config.js';
import { ExitCode, SgqError, configError, usageError } from './errors.js';
import { RawNumber, type Json } from './json.js';
import { PageFailure, fetchPages, type PageRequest, type StopReason } from './paginate.js';
import { routeRequest } from './request-body.js';
import { ROUTES, findRouteByPath, methodName, normalizeRoutePath, type RouteSpec } from './routes.js';
import { parseSince } from './since.js';
import { clientFromSettings } from './client-from-settings.js';
import { resolveClientSettings, type ClientSettings } from './settings.js';

export { SgqError, ExitCode, EXIT_MEANINGS, type ErrorKind, type ErrorDetails } from './errors.js';
export { ROUTES, methodName, type RouteSpec } from './routes.js';
export type { CacheRequest, CachedAnswer, Exchange, ResponseCache } from './client.js';

/** A JSON value as the library hands it out: integers past 2^53 are BigInts, exact to the digit. */
export type SgqValue = null | boolean | number | bigint | string | SgqValue[] | { [key: string]: SgqValue };
export type SgqRecord = { [key: string]: SgqValue };

/** Where calls go: what `createClient` resolves, or what a caller's own starter returns. */
export interface Endpoint {
  baseUrl: string;
  apiKey?: string;
  close?: () => Promise<void>;
}

export interface ClientOptions {
  /** The service address; else SGQ_BASE_URL, else the profile's `base-url`. */
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
  /** Wait out a 429 whose Retry-After (in ms) is past the 60 s cap, up to this long (as `--max-wait`). */
  maxWait?: number;
  /** Receives every exchange, the key masked (as `--trace` writes it). */
  onExchange?: (exchange: Exchange) => void;
  /** Answers to reuse (as `--cache`): a hit sends no request and spends nothing. */
  cache?: ResponseCache;
  /** Supplies the endpoint instead of the config (the public entry's `sandbox: true` uses it). */
  endpoint?: () => Promise<Endpoint>;
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
export interface SgqPage {
  /** The page asked for (null on routes without pages). */
  page: number | null;
  nextPage: number | null;
  records: SgqRecord[];
  /** Error records that came beside good ones. */
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

/** Records of every page, fetched lazily: a `break` sends no further request. */
export interface Records extends AsyncIterable<SgqRecord> {
  /** The pages themselves, with page numbers and the balance. */
  pages(): AsyncIterable<SgqPage>;
  /**
   * The records, collected into memory, up to a cap: on a paid API, fetching everything is
   * asked for by name (`{ all: true }`), as stripe-node's `autoPagingToArray` asks for a limit.
   * A cap here is added to the call's own options; the lower one wins.
   */
  toArray(cap: ToArrayCap): Promise<SgqRecord[]>;
  /** Set when an iteration has ended. */
  readonly result: IterationResult | undefined;
}

/** How far `toArray` goes: at least one of `limit`, `maxPages`, `maxCredits`, or `{ all: true }`. */
export type ToArrayCap = { all?: boolean; limit?: number; maxPages?: number; maxCredits?: number } & (
  | { all: true }
  | { limit: number }
  | { maxPages: number }
  | { maxCredits: number }
);

type UserMethod = (user: string, options?: CallOptions) => Records;

export interface SgqClient {
  graph: { followers: UserMethod; following: UserMethod };
  alpha: { scoreHistory: UserMethod };
  metadata: { history: UserMethod; tweets: UserMethod; latestTweets: UserMethod; userid: UserMethod };
  lists: { members: UserMethod; latestTweets: UserMethod };
  /** `/info`: the service's answer as one record. */
  info(options?: Pick<CallOptions, 'signal' | 'timeout' | 'retries'>): Promise<SgqRecord>;
  /** A raw call like `sgq api`: POST a body to any route, get the answer's body. */
  request(route: string, body?: Record<string, SgqValue>, options?: Pick<CallOptions, 'signal' | 'timeout' | 'retries'>): Promise<SgqRecord>;
  /** Closes the connection pool (and a sandbox the client started). Idle pools do not keep Node alive. */
  close(): Promise<void>;
}

export function createClient(options: ClientOptions = {}): SgqClient {
  const clients = new Clients(options);
  const byNamespace = (namespace: RouteSpec['namespace']) =>
    Object.fromEntries(
      ROUTES.filter((r) => r.namespace === namespace).map((r): [string, UserMethod] => [methodName(r.verb), (user, call) => routeRecords(clients, r, checkSubject(r, user), call)]),
    );
  const info = ROUTES.find((r) => r.subject === 'none')!;
  return {
    graph: byNamespace('graph') as SgqClient['graph'],
    alpha: byNamespace('alpha') as SgqClient['alpha'],
    metadata: byNamespace('metadata') as SgqClient['metadata'],
    lists: byNamespace('lists') as SgqClient['lists'],
    async info(call = {}) {
      const [record] = await routeRecords(clients, info, null, call).toArray({ all: true });
      return record ?? {};
    },
    request: (route, body = {}, call = {}) => rawRequest(clients, route, body, call),
    close: () => clients.closeAll(),
  };
}

type Target = Omit<ClientSettings, 'connections'> & { close?: () => Promise<void> };

/**
 * The endpoint and settings of a library client, resolved on the first call, and the pools
 * open at a time: one per iteration, so an abort by its own signal ends only that iteration.
 */
class Clients {
  private target: Promise<Target> | undefined;
  private readonly open = new Set<ApiClient>();

  constructor(private readonly options: ClientOptions) {}

  /** A pool for one iteration or call, with the settings the call may override. */
  async openFor(route: RouteSpec | undefined, call: CallOptions): Promise<ApiClient> {
    const target = await (this.target ??= this.resolve());
    if (route?.needsKey && !target.apiKey) {
      throw configError('no API key configured', 'pass apiKey to createClient or set SGQ_API_KEY; metadata.userid and info need none');
    }
    const { close: _close, ...settings } = target;
    const client = clientFromSettings(
      { ...settings, timeoutMs: call.timeout ?? settings.timeoutMs, retries: call.retries ?? settings.retries, connections: call.parallel ?? 1 },
      { signal: call.signal, exchange: this.options.onExchange, cache: this.options.cache },
    );
    this.open.add(client);
    return client;
  }

  async release(client: ApiClient): Promise<void> {
    this.open.delete(client);
    await client.close();
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.open].map((c) => c.close()));
    this.open.clear();
    const current = this.target;
    this.target = undefined;
    const target = await current?.catch(() => undefined);
    await target?.close?.();
  }

  private async resolve(): Promise<Target> {
    const { options } = this;
    const env = options.env ?? {};
    // The config store is read only when something is left to resolve.
    const needsStore = !options.endpoint && (!options.baseUrl || options.apiKey === undefined || options.timeout === undefined || options.retries === undefined);
    const config = needsStore ? resolveConfig({ profile: options.profile, baseUrl: options.baseUrl }, env) : undefined;
    const given = options.endpoint ? await options.endpoint() : undefined;
    const baseUrl = given?.baseUrl ?? options.baseUrl ?? config?.baseUrl;
    if (!baseUrl) throw configError('no service address configured', 'pass baseUrl to createClient, set SGQ_BASE_URL, or use createClient({ sandbox: true })');
    const endpoint = { baseUrl, apiKey: given?.apiKey ?? options.apiKey ?? config?.apiKey };
    const settings = resolveClientSettings(endpoint, { timeoutMs: options.timeout, retries: options.retries, maxWaitMs: options.maxWait }, config, env);
    return { ...settings, close: given?.close };
  }
}

/** The records of one subject of a route, fetched lazily: a `break` sends no further request. */
function routeRecords(clients: Clients, route: RouteSpec, subject: string | null, call: CallOptions = {}): Records {
  checkCallOptions(route, call);
  // Checked now, so a bad value throws at the call, before any request.
  const since = call.since === undefined ? undefined : parseSince(call.since);
  const state: { result?: IterationResult } = {};
  const pagesUnder = (options: CallOptions) => {
    const request = routeRequest(route, { user: subject, how: options.how ?? 'username', since }, { startPage: options.page ?? 1, follow: true, maxPages: options.maxPages });
    return routePages(clients, route, request, options, state);
  };
  const pages = () => pagesUnder(call);
  return {
    pages,
    async *[Symbol.asyncIterator]() {
      for await (const page of pages()) yield* page.records;
    },
    async toArray(cap: ToArrayCap) {
      const capped = withCap(call, cap);
      checkCallOptions(route, capped);
      const all: SgqRecord[] = [];
      for await (const page of pagesUnder(capped)) all.push(...page.records);
      return all;
    },
    get result() {
      return state.result;
    },
  };
}

async function* routePages(clients: Clients, route: RouteSpec, request: PageRequest, call: CallOptions, state: { result?: IterationResult }): AsyncGenerator<SgqPage> {
  const budget = new Budget({ limit: call.limit, maxCredits: call.maxCredits, knownCost: route.cost });
  const client = await clients.openFor(route, call);
  const counted = { pages: 0, records: 0, extraCalls: 0 };
  const iterator = fetchPages(client, request, budget, { signal: call.signal, parallel: call.parallel, onExtraCall: () => counted.extraCalls++ });
  try {
    for (;;) {
      const next = await iterator.next();
      if (next.done) {
        state.result = { stoppedBy: next.value === 'more' ? 'done' : next.value, ...counted, creditsUsed: budget.creditsUsed, creditsLeft: budget.creditsLeft };
        return;
      }
      const { granted, asked, nextPage } = next.value;
      const taken = next.value.records.slice(0, granted);
      // Only a page that needed the lossless parser holds values to convert.
      const kept = next.value.lossless ? taken.map(toSgqRecord) : (taken as SgqRecord[]);
      counted.pages++;
      counted.records += kept.length;
      yield { page: asked, nextPage, records: kept, errors: next.value.errors, creditsLeft: next.value.credits };
    }
  } catch (error) {
    throw libraryError(error, call.signal);
  } finally {
    await iterator.return('done').catch(() => undefined);
    await clients.release(client);
  }
}

/** `request(route, body)`: a raw call like `sgq api`, resolving to the answer's body. */
async function rawRequest(clients: Clients, route: string, body: Record<string, SgqValue>, call: Pick<CallOptions, 'signal' | 'timeout' | 'retries'>): Promise<SgqRecord> {
  const path = normalizeRoutePath(route);
  if (!/^[\w-]+(\/[\w-]+)*$/.test(path)) throw usageError(`invalid route ${JSON.stringify(route)}`, 'give a path such as graph/get_followers');
  const client = await clients.openFor(findRouteByPath(path), call);
  try {
    const reply = await client.call(path, toJson(body) as Record<string, Json>, { sendKey: true });
    return toSgqRecord(reply.body);
  } catch (error) {
    throw libraryError(error, call.signal);
  } finally {
    await clients.release(client);
  }
}

/** The call's options under toArray's cap: of two limits of one kind, the lower. */
function withCap(call: CallOptions, cap: ToArrayCap | undefined): CallOptions {
  const given = cap !== null && typeof cap === 'object' ? cap : undefined;
  const caps = (['limit', 'maxPages', 'maxCredits'] as const).filter((name) => given?.[name] !== undefined);
  if (!given || (given.all !== true && caps.length === 0)) {
    throw new TypeError('toArray() needs a cap: pass { limit }, { maxPages } or { maxCredits }, or { all: true } to collect every record');
  }
  const capped = { ...call };
  for (const name of caps) {
    const own = call[name];
    const value = given[name]!;
    // A bad value is left for checkCallOptions to name.
    capped[name] = own === undefined || typeof value !== 'number' ? value : Math.min(own, value);
  }
  return capped;
}

function checkSubject(route: RouteSpec, user: string): string {
  if (typeof user !== 'string' || user.trim() === '') throw usageError(`${methodName(route.verb)}: give a ${route.subject === 'list' ? 'list id' : 'user'}`);
  return user.trim();
}

function checkCallOptions(route: RouteSpec, call: CallOptions): void {
  const whole = (name: keyof CallOptions, min: number) => {
    const value = call[name];
    if (value !== undefined && (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min)) {
      throw usageError(`${name} must be a whole number from ${min} up`);
    }
  };
  whole('page', 1);
  whole('limit', 1);
  whole('maxPages', 1);
  whole('parallel', 1);
  whole('maxCredits', 0);
  whole('retries', 0);
  if (call.timeout !== undefined && !(call.timeout > 0)) throw usageError('timeout must be a number of milliseconds greater than 0');
  if (call.since !== undefined && !route.since) throw usageError(`since is not accepted by ${route.path}`);
  if (call.page !== undefined && !route.paginated) throw usageError(`${route.path} has no pages`);
}

/** A stop by the caller's signal rethrows its reason, as fetch does; everything else is an SgqError. */
function libraryError(error: unknown, signal: AbortSignal | undefined): unknown {
  if (error instanceof StoppedError || signal?.aborted) return signal?.reason ?? error;
  if (error instanceof PageFailure) {
    const inner = error.error;
    if (inner instanceof SgqError) inner.details.page = error.page;
    return inner;
  }
  if (error instanceof SgqError) return error;
  return new SgqError(ExitCode.internal, error instanceof Error ? error.message : String(error));
}

/** The lossless parser keeps long integers as text; the library hands them out as BigInts. */
function toSgqValue(value: Json): SgqValue {
  if (value instanceof RawNumber) return /^-?\d+$/.test(value.text) ? BigInt(value.text) : Number(value.text);
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(toSgqValue);
  return toSgqRecord(value);
}

function toSgqRecord(value: { [key: string]: Json }): SgqRecord {
  const out: SgqRecord = {};
  for (const key of Object.keys(value)) out[key] = toSgqValue(value[key]!);
  return out;
}

/** BigInts in a request body go out as exact JSON integers. */
function toJson(value: SgqValue): Json {
  if (typeof value === 'bigint') return new RawNumber(value.toString());
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(toJson);
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toJson(v)]));
}
