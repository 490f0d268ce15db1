// The library: one method per route of the table, over the same client, pages, budgets, retries
// and lossless JSON as the CLI. Nothing here runs at import: the config is read, the pool made
// and the sandbox (if asked for) started on the first call.
import { Budget } from './budget.js';
import { StoppedError, type ApiClient } from './client.js';
import type { CallOptions, ClientOptions, IterationResult, Records, SgqClient, SgqPage, ToArrayCap } from './client-type.js';
import { exchangeHooks } from './hooks.js';
import { toJson, toSgqRecord, type SgqRecord, type SgqValue } from './lossless.js';
import { DEFAULT_BASE_URL, resolveConfig } from './config.js';
import { ExitCode, SgqError, configError, usageError } from './errors.js';
import type { Json } from './json.js';
import { PageFailure, fetchPages, type PageRequest } from './paginate.js';
import { routeRequest } from './request-body.js';
import { ROUTES, findRouteByPath, methodName, normalizeRoutePath, type RouteSpec } from './routes.js';
import { parseSince } from './since.js';
import { clientFromSettings } from './client-from-settings.js';
import { resolveClientSettings, type ClientSettings } from './settings.js';

export { SgqError, ExitCode, EXIT_MEANINGS, type ErrorKind, type ErrorDetails, type Fix } from './errors.js';
export { ROUTES, methodName, type RouteSpec } from './routes.js';
export type { CacheRequest, CachedAnswer, ResponseCache } from './client.js';
export type { Exchange, SgqHooks, RequestEvent, ResponseEvent, RetryEvent } from './hooks.js';
export { LosslessNumber, parseJson, stringifyJson, type SgqValue, type SgqRecord } from './lossless.js';
export { RECORD_FIELDS, type FieldKind, type FieldSpec, type RecordsName } from './record-fields.js';
export type * from './record-types.js';
export type * from './client-type.js';

type RouteMethod = (user: string, options?: CallOptions) => Records;

export function createClient(options: ClientOptions = {}): SgqClient {
  const clients = new Clients(options);
  // One method per route of the table, in its namespace: the type (client-type.ts) is computed from the same table.
  const namespaces: Record<string, Record<string, RouteMethod>> = {};
  for (const r of ROUTES) {
    if (r.namespace === '') continue;
    (namespaces[r.namespace] ??= {})[methodName(r.verb)] = (user, call) => routeRecords(clients, r, checkSubject(r, user), call);
  }
  const info = ROUTES.find((r) => r.subject === 'none')!;
  return {
    ...(namespaces as unknown as Omit<SgqClient, 'info' | 'request' | 'close'>),
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
  private readonly hooks;
  /** A hook's failure, told once per createClient, however many iterations it breaks. */
  private readonly hookFailed?: (message: string) => void;

  constructor(private readonly options: ClientOptions) {
    const { hooks, onExchange, hookFailed } = options;
    this.hooks = [...(hooks ? [hooks] : []), ...(onExchange ? [exchangeHooks(onExchange)] : [])];
    let told = false;
    if (hookFailed) this.hookFailed = (message) => void (told || ((told = true), hookFailed(message)));
  }

  /** A pool for one iteration or call, with the settings the call may override. */
  async openFor(route: RouteSpec | undefined, call: CallOptions): Promise<ApiClient> {
    const target = await (this.target ??= this.resolve());
    if (route?.needsKey && !target.apiKey) {
      throw configError('no API key configured', 'pass apiKey to createClient or set SGQ_API_KEY; metadata.userid and info need none');
    }
    const { close: _close, ...settings } = target;
    const client = clientFromSettings(
      { ...settings, timeoutMs: call.timeout ?? settings.timeoutMs, retries: call.retries ?? settings.retries, connections: call.parallel ?? 1 },
      { signal: call.signal, hooks: this.hooks, hookFailed: this.hookFailed, cache: this.options.cache },
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
    // The store, when read, gives the public address when nothing else names one.
    const baseUrl = given?.baseUrl ?? options.baseUrl ?? config?.baseUrl ?? DEFAULT_BASE_URL;
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
      const { signal } = call;
      for await (const page of pages()) {
        for (const record of page.records) {
          // After abort() not one more record of the page in hand: its reason, as fetch throws it.
          signal?.throwIfAborted();
          yield record;
        }
      }
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
      // A page fetched ahead (parallel) is not handed out after abort(): the catch below throws the reason.
      call.signal?.throwIfAborted();
      const { granted, asked, nextPage } = next.value;
      const taken = next.value.records.slice(0, granted);
      // Only a page that needed the lossless parser holds values to convert.
      const kept = next.value.lossless ? taken.map(toSgqRecord) : (taken as SgqRecord[]);
      counted.pages++;
      counted.records += kept.length;
      yield { page: asked, nextPage, records: kept, errors: next.value.errors, creditsLeft: next.value.credits };
    }
  } catch (error) {
    const thrown = libraryError(error, call.signal);
    if (thrown instanceof SgqError) thrown.details.route ??= route.path;
    throw thrown;
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
      throw usageError(`${name} must be a whole number from ${min} up`, undefined, { option: name, route: route.path });
    }
  };
  whole('page', 1);
  whole('limit', 1);
  whole('maxPages', 1);
  whole('parallel', 1);
  whole('maxCredits', 0);
  whole('retries', 0);
  if (call.timeout !== undefined && !(call.timeout > 0)) throw usageError('timeout must be a number of milliseconds greater than 0', undefined, { option: 'timeout', route: route.path });
  if (call.since !== undefined && !route.since) throw usageError(`since is not accepted by ${route.path}`, undefined, { option: 'since', route: route.path });
  if (call.page !== undefined && !route.paginated) throw usageError(`${route.path} has no pages`, undefined, { option: 'page', route: route.path });
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
