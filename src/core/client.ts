import { ExitCode, type ErrorDetails } from './errors.js';
import { numberValue, stringifyJson, type Json } from './json.js';
import { maskSecret, type KeySource } from './config.js';
import { CallError, classify, isErrorRecord, type JsonObject } from './classify.js';
import { maskedProxy, type ProxyChoice } from './proxy.js';
import { rateLimitWait, retryDelay, sleep, type RetryPolicy } from './retry.js';
import type { Pacer } from './pace.js';
import { HOUR_MS } from './rate-limits.js';
import { normalizeRoutePath } from './routes.js';
import { isoSecond, waitWords } from './wait-words.js';
import type { Transport } from './transport.js';
import { PROXY_CLOSED, casFor, transportTo } from './pools.js';
import { HookRunner, type RequestEvent, type ResponseEvent, type SgqHooks } from './hooks.js';
import { classify as fileTrouble } from '../fs/file-errors.js';

export interface ClientOptions {
  baseUrl: string;
  apiKey?: string;
  /** Where the key came from, named if the service rejects it. */
  apiKeySource?: KeySource;
  timeoutMs: number;
  retry: RetryPolicy;
  env: Record<string, string | undefined>;
  /** The proxy to go through (src/api/proxy.ts chooses it), or none. */
  proxy?: ProxyChoice;
  /** Stops every request of the run (Ctrl-C, a closed pipe, a reached limit). */
  signal?: AbortSignal;
  /** Receives `--verbose` lines; never given the API key. */
  trace?: (line: string) => void;
  /** Sockets per origin: the number of requests the run keeps in flight. */
  connections: number;
  /**
   * The run may make a great many calls (a list read from stdin): they go through undici's
   * pool, whose cost per call is about half of node:http's (see transport.ts).
   */
  manyCalls?: boolean;
  /** Called before undici is loaded (the CLI keeps its WebAssembly parser on V8's baseline tier). */
  beforeUndici?: () => Promise<void>;
  /**
   * The process ends when the client is closed (the CLI's own process): close() leaves idle
   * keep-alive sockets of node:http to that exit instead of destroying them (see NodeTransport).
   */
  exitCloses?: boolean;
  /**
   * Told of a wait past the Retry-After cap (`--max-wait`) before it starts; the function it
   * returns, if any, is called when the wait ends (a countdown stops there).
   */
  onLongWait?: (ms: number, why: string) => (() => void) | void;
  /** Answers kept from earlier calls (`--cache`): a hit sends nothing and spends nothing. */
  cache?: ResponseCache;
  /** See each request, answer and retry (the library's `hooks`, `--verbose`, `--trace FILE`), the key masked. */
  hooks?: readonly SgqHooks[];
  /** Told (once) that a hook threw; the call goes on. */
  hookFailed?: (message: string) => void;
  /** Keeps a trial account's calls within its hourly limits (the CLI's plan), and learns of its refusals. */
  pacer?: Pacer;
  /** The hour of a trial limit, in ms: an hour, shorter only in tests (SGQ_TRIAL_HOUR_MS). */
  trialHourMs?: number;
}


export interface CallOptions {
  sendKey: boolean;
  method?: string;
  /** Cancels this one call (the run's signal stops them all). */
  signal?: AbortSignal;
}

export interface Reply {
  text: string;
  body: JsonObject;
  status: number;
  headers: Record<string, string | string[]>;
  /** Came from the cache: no request was sent and nothing was billed. */
  cached?: boolean;
  /** When the answer was asked for (ms since the epoch): earlier than this call for a cached one. */
  askedAt?: number;
  /**
   * Keeps a clean answer in the cache: called by whoever checks it (the pages' checks), so
   * that an answer sgq refused is never replayed from the cache.
   */
  keep?: () => void;
}

/** A request as the cache keys it: the full URL (base address, route, query) and the body. */
export interface CacheRequest {
  method: string;
  url: string;
  body: string | undefined;
}

/** A successful answer as the cache keeps it. */
export interface CachedAnswer {
  status: number;
  headers: Record<string, string | string[]>;
  text: string;
  /** When it was asked for (ms since the epoch): what a --since-last mark may claim from it (unknown: the epoch). */
  askedAt?: number;
}

/**
 * Where answers are kept between runs (the CLI keeps them in files). `get` returns only an
 * entry still within its time to live; the implementation keys entries on the caller too.
 */
export interface ResponseCache {
  get(request: CacheRequest): CachedAnswer | undefined;
  put(request: CacheRequest, answer: CachedAnswer): void;
}

/** Thrown when the run's signal stopped a request; the runner decides what it means. */
export class StoppedError extends Error {
  constructor(readonly reason: unknown) {
    super('stopped');
  }
}


/** Largest body accepted, so a runaway answer cannot exhaust memory. */
const MAX_BODY_BYTES = 64 * 1024 * 1024;


/**
 * What a call sends, decided in one place for the client and `--dry-run`: the path below the
 * origin (the base URL's prefix, `/api/`, the route, and for GET the fields as a query) and
 * the JSON body (none for GET and HEAD).
 */
export function requestTarget(prefix: string, path: string, payload: Record<string, Json>, method: string): { target: string; body?: string } {
  const target = `${prefix}/api/${path.replace(/^\/+/, '')}`;
  if (method !== 'GET' && method !== 'HEAD') return { target, body: stringifyJson(payload) };
  const query = new URLSearchParams(Object.entries(payload).map(([k, v]): [string, string] => [k, typeof v === 'string' ? v : stringifyJson(v)]));
  return { target: [...query].length ? `${target}?${query}` : target };
}

/**
 * The origin and the path prefix of a base URL (`https://gw.example.com/social/` → `/social`).
 * A trailing `/api` is the service's own, as its clients write the address
 * (`https://toto.oz.xyz/api` → no prefix): the routes are never sent to `/api/api/…`.
 */
export function splitBaseUrl(baseUrl: string): { origin: string; prefix: string } {
  const base = new URL(baseUrl.replace(/\/+$/, ''));
  return { origin: base.origin, prefix: base.pathname.replace(/\/+$/, '').replace(/\/api$/i, '') };
}


/** A transport failure in words (`base` as it may be shown), naming the proxy when there is one, and whether retrying may help. */
export const transportFailure = (error: unknown, base: string, proxy: ProxyChoice | undefined): CallError => (proxy ? proxyFailure(error, base, proxy) : networkFailure(error, base));

/** One connection pool per run, kept alive across pages and shared by every user in flight. */
export class ApiClient {
  /** Replaced when a timed-out request is stuck in it (see `retire`). */
  private dispatcher: Transport;
  private readonly base: string;
  private readonly origin: string;
  /** The base URL's path, under which the service's `/api/...` routes live. */
  private readonly prefix: string;
  private readonly proxy: ProxyChoice | undefined;
  /** The CAs an https service is checked against, read on first use. */
  private readonly cas: () => Promise<string[]> | undefined;
  private readonly hooks: HookRunner;

  constructor(private readonly options: ClientOptions) {
    this.base = options.baseUrl.replace(/\/+$/, '');
    ({ origin: this.origin, prefix: this.prefix } = splitBaseUrl(this.base));
    this.cas = casFor(this.origin, options.env);
    this.proxy = options.proxy;
    this.hooks = new HookRunner(options.hooks ?? [], options.hookFailed);
    if (this.proxy) {
      const how = this.origin.startsWith('https:') ? 'a CONNECT tunnel' : 'absolute-URI forwarding';
      options.trace?.(`through the proxy ${maskedProxy(this.proxy.url)} (from ${this.proxy.source}) by ${how}`);
    }
    this.dispatcher = this.newDispatcher();
    // A stop ends the run, so it fails every request in flight at once by destroying the pool:
    // one listener for the run rather than one per request.
    options.signal?.addEventListener('abort', () => void this.dispatcher.destroy().catch(() => undefined), { once: true });
  }

  /** The key, masked in every failure built from the service's words. */
  private get secrets(): readonly string[] {
    return this.options.apiKey ? [this.options.apiKey] : [];
  }

  /** A keep-alive pool to the origin, through the run's proxy (transportTo). */
  private newDispatcher(): Transport {
    return transportTo(this.origin, { ...this.options, proxy: this.proxy, ca: this.cas });
  }

  /**
   * Gives up a dispatcher that holds a request undici cannot abort (one still waiting for a
   * socket, e.g. while a proxy keeps refusing the tunnel): the run goes on with a fresh one,
   * and destroying the old one stops its connection attempts.
   */
  private retire(old: Transport): void {
    if (this.dispatcher === old) this.dispatcher = this.newDispatcher();
    void old.destroy().catch(() => undefined);
  }

  /** POSTs a JSON payload (or GETs with a query) and returns the classified body, retrying transient failures. */
  async call(path: string, payload: Record<string, Json>, opts: CallOptions): Promise<Reply> {
    const { retry, cache } = this.options;
    const method = (opts.method ?? 'POST').toUpperCase();
    const { target, body } = requestTarget(this.prefix, path, payload, method);
    const asked: CacheRequest | undefined = cache && { method, url: `${this.origin}${target}`, body };
    const kept = asked && cache!.get(asked);
    if (kept) {
      const reply: Reply = { ...kept, body: classify(kept.status, kept.headers, kept.text, { path: target, secrets: this.secrets }), cached: true };
      const sent = this.requestEvent(path, method, asked!.url, {}, body, 0, Date.now());
      this.emitResponse(sent, { status: kept.status, responseHeaders: kept.headers, bytes: Buffer.byteLength(kept.text), ms: 0, creditsLeft: creditsOf(reply), cached: true });
      return reply;
    }
    const askedAt = Date.now();
    for (let attempt = 1; ; attempt++) {
      try {
        const reply = await this.paced(path, opts, () => this.once(path, { method, target, body }, opts, attempt - 1));
        // Only a clean answer may be kept: error records, placeholders and refusals all threw or carry errors.
        const data = reply.body.data;
        if (cache && !(Array.isArray(data) && data.some(isErrorRecord))) {
          reply.keep = () => cache.put(asked!, { status: reply.status, headers: reply.headers, text: reply.text, askedAt });
        }
        return reply;
      } catch (error) {
        const delay = await this.retryDelayFor(path, error, attempt);
        this.hooks.emit('retry', this.masked({ route: path, retry: attempt, retries: retry.retries, delayMs: delay, reason: (error as Error).message, status: (error as CallError).details.status ?? null }));
        const waited = delay > retry.maxRetryAfterMs || isQuota(error) ? this.options.onLongWait?.(delay, waitReason(path, error as CallError)) : undefined;
        try {
          await sleep(delay, this.stopSignal(opts));
        } catch (reason) {
          throw new StoppedError(reason);
        } finally {
          waited?.();
        }
      }
    }
  }

  /** What stops a call's waits: the run's signal and the call's own. */
  private stopSignal(opts: CallOptions): AbortSignal | undefined {
    const stops = [this.options.signal, opts.signal].filter((s): s is AbortSignal => s !== undefined);
    return stops.length > 1 ? AbortSignal.any(stops) : stops[0];
  }

  /** One attempt, sent when the pacer (a trial account's pace) lets it go, and told to it when answered. */
  private async paced(path: string, opts: CallOptions, attempt: () => Promise<Reply>): Promise<Reply> {
    const { pacer } = this.options;
    if (!pacer) return attempt();
    let answered: (() => Promise<void>) | undefined;
    try {
      answered = await pacer.before(normalizeRoutePath(path), this.stopSignal(opts));
    } catch (reason) {
      throw new StoppedError(reason);
    }
    try {
      return await attempt();
    } finally {
      await answered?.();
    }
  }

  /** The wait before trying a failed call again, or the error to end it with (thrown). */
  private async retryDelayFor(path: string, error: unknown, attempt: number): Promise<number> {
    const { retry } = this.options;
    if (isQuota(error)) return this.quotaDelay(path, error, attempt);
    if (!(error instanceof CallError) || !error.retryable) throw error;
    const rateLimited = error.details.status === 429 && error.retryAfterMs !== undefined;
    const longWait = rateLimited ? rateLimitWait(retry, attempt, error.retryAfterMs!) : undefined;
    const delay = retryDelay(retry, attempt, error.retryAfterMs) ?? longWait;
    if (delay !== undefined) return delay;
    if (error.retryAfterMs !== undefined && attempt <= retry.retries) {
      const [longer, hint, details] = longWaitWords(Boolean(retry.maxWaitMs), rateLimited);
      throw new CallError(error.exitCode, `${error.message}; it asks to wait ${Math.ceil(error.retryAfterMs / 1000)}s, ${longer}`, hint, false, undefined, [], { ...error.details, ...details });
    }
    throw attempt > 1 ? new CallError(error.exitCode, `${error.message} (after ${attempt - 1} ${attempt === 2 ? 'retry' : 'retries'})`, error.hint, false, undefined, error.records, error.details) : error;
  }

  /**
   * A trial limit: the pacer learns of it, and the call waits only for a Retry-After within the
   * cap or a wait --max-wait allows; without a Retry-After the next request may go an hour
   * after the refusal. Otherwise the call ends, saying when the next request may go.
   */
  private async quotaDelay(path: string, error: CallError, attempt: number): Promise<number> {
    const { retry, pacer } = this.options;
    const waitMs = error.retryAfterMs ?? this.options.trialHourMs ?? HOUR_MS;
    await pacer?.refused(normalizeRoutePath(path), { limit: error.details.limit, waitMs });
    const asked = error.retryAfterMs !== undefined && error.retryAfterMs <= retry.maxRetryAfterMs;
    if (attempt <= retry.retries && (asked || waitMs <= (retry.maxWaitMs ?? 0))) return waitMs;
    const retryAt = Date.now() + waitMs;
    const [hint, details] = retry.maxWaitMs
      ? ['try again then, or raise maxWait', { option: 'maxWait', fix: 'raise-option' } as const]
      : ['try again then, or set maxWait to wait for it', { option: 'maxWait', fix: 'set-option' } as const];
    const message = `${error.message}; the next request may go at ${isoSecond(retryAt)} (in ${waitWords(waitMs)})`;
    throw new CallError(ExitCode.quota, message, hint, false, undefined, [], { ...error.details, ...details, retryAt: isoSecond(retryAt) });
  }

  /** One attempt of a call: sends the request and reads its answer within the time limit. */
  private async once(path: string, { method, target, body }: { method: string; target: string; body?: string }, opts: CallOptions, retry: number): Promise<Reply> {
    const { apiKey, timeoutMs, signal } = this.options;
    if (signal?.aborted) throw new StoppedError(signal.reason);
    if (opts.signal?.aborted) throw new StoppedError(opts.signal.reason);
    const headers: Record<string, string> = { accept: '*/*', 'user-agent': 'sgq' };
    if (opts.sendKey && apiKey) headers['x-api-key'] = apiKey;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const started = Date.now();
    const asked = this.requestEvent(path, method, `${this.origin}${target}`, headers, body, retry, started);
    this.hooks.emit('request', asked);

    // One timer per request, cleared at the end: AbortSignal.timeout would keep a live timer
    // per page for the whole timeout, and memory would grow with the page count. Giving up
    // settles the attempt at once, whatever the layers below do: the time limit bounds it.
    const dispatcher = this.dispatcher;
    const sent = dispatcher.request({ path: target, method, headers, body, maxBodyBytes: MAX_BODY_BYTES });
    let gaveUp: 'expired' | 'cancelled' | undefined;
    const giveUp = (why: 'expired' | 'cancelled') => {
      if (sent.settled) return;
      gaveUp = why;
      // A request still waiting for a socket cannot be stopped. A cancelled one is dropped when
      // it gets one; one that timed out may wait forever (a proxy refusing every tunnel), so
      // its dispatcher is given up.
      if (!sent.abort() && why === 'expired') this.retire(dispatcher);
    };
    const timer = setTimeout(giveUp, timeoutMs, 'expired');
    // A cancelled call (a page asked for in parallel past the end) settles at once, as a timeout does.
    const cancel = opts.signal && (() => giveUp('cancelled'));
    if (cancel) opts.signal!.addEventListener('abort', cancel, { once: true });
    let bytes: number | null = null;
    let reply: Reply | undefined;
    const answered = (error?: unknown) => {
      const head = sent.head;
      const responseHeaders = (head?.headers as Record<string, string | string[]> | undefined) ?? null;
      this.emitResponse(asked, { status: head?.statusCode ?? null, responseHeaders, bytes, ms: Date.now() - started, creditsLeft: reply ? creditsOf(reply) : null, cached: false, error });
    };
    try {
      const res = await sent.response;
      const { statusCode: status, text } = res;
      const headers = res.headers as Record<string, string | string[]>;
      bytes = Buffer.byteLength(text);
      const key = opts.sendKey && apiKey ? { masked: maskSecret(apiKey), source: this.options.apiKeySource } : undefined;
      reply = { text, body: classify(status, headers, text, { path: target, key, secrets: this.secrets }), status, headers };
      answered();
      return reply;
    } catch (thrown) {
      let error = thrown;
      if (gaveUp === 'cancelled') error = new StoppedError(opts.signal?.reason);
      else if (gaveUp === 'expired') error = this.timedOut();
      answered(error);
      if (error instanceof CallError) throw error;
      if (error instanceof StoppedError) throw error;
      if (signal?.aborted) throw new StoppedError(signal.reason);
      if (opts.signal?.aborted) throw new StoppedError(opts.signal.reason);
      throw transportFailure(error, this.base, this.proxy);
    } finally {
      clearTimeout(timer);
      if (cancel) opts.signal!.removeEventListener('abort', cancel);
    }
  }

  private timedOut(): CallError {
    const via = this.proxy ? ` through the proxy ${maskedProxy(this.proxy.url)} (from ${this.proxy.source})` : '';
    const { timeoutMs } = this.options;
    return new CallError(ExitCode.network, `no complete answer from ${this.base}${via} within ${timeoutMs / 1000}s`, 'raise the time limit, or try again later', true, undefined, [], {
      option: 'timeout',
      fix: 'raise-option',
    });
  }

  /** A request as hooks see it, the key masked wherever it shows. */
  private requestEvent(route: string, method: string, url: string, headers: Record<string, string>, body: string | undefined, retry: number, started: number): RequestEvent {
    if (this.hooks.empty) return undefined as unknown as RequestEvent;
    return this.masked({ route: route.replace(/^\/+/, ''), method, url, headers: { ...headers }, body: body ?? null, retry, time: new Date(started).toISOString() });
  }

  private emitResponse(asked: RequestEvent, answer: Omit<ResponseEvent, keyof RequestEvent | 'error'> & { error?: unknown }): void {
    if (this.hooks.empty) return;
    const { error, ...rest } = answer;
    const why = error === undefined ? {} : { error: error instanceof Error ? error.message : String(error) };
    this.hooks.emit('response', this.masked({ ...asked, ...rest, ...why }));
  }

  /** The value with the key masked wherever it shows: headers, URL, body, an error's words. */
  private masked<T>(value: T): T {
    const { apiKey } = this.options;
    if (!apiKey) return value;
    return JSON.parse(JSON.stringify(value).replaceAll(JSON.stringify(apiKey).slice(1, -1), maskSecret(apiKey))) as T;
  }

  async close(): Promise<void> {
    await this.dispatcher.close().catch(() => undefined);
  }
}

const isQuota = (error: unknown): error is CallError => error instanceof CallError && error.exitCode === ExitCode.quota;

/** Why a call waits, for the one line that says so: a trial limit's message names its route already. */
const waitReason = (path: string, error: CallError): string => (error.exitCode === ExitCode.quota ? error.message : `${path}: ${error.message}`);

/** What a refused long Retry-After says, in the library's words (the CLI names --max-wait). */
function longWaitWords(given: boolean, rateLimited: boolean): [string, string, ErrorDetails] {
  if (given) return ['longer than maxWait allows', 'try again later, or raise maxWait', { option: 'maxWait', fix: 'raise-option' }];
  if (rateLimited) return ['longer than sgq waits', 'try again later, or set maxWait to wait for it', { option: 'maxWait', fix: 'set-option' }];
  return ['longer than sgq waits', 'try again later', {}];
}

/** `current_credits` of an answer, where it has one. */
function creditsOf(reply: Reply): number | null {
  return numberValue(reply.body.current_credits) ?? null;
}

/** The code of a proxy that closed the connection before a request could be sent. */


const TRANSIENT_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH',
  'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CLOSED',
  'UND_ERR_DESTROYED', PROXY_CLOSED,
]);

const TLS_CODE = /CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)|ERR_TLS|ERR_SSL|HOSTNAME_MISMATCH/;
const isTlsFailure = (code: string, detail: string): boolean => TLS_CODE.test(code) || /certificate/i.test(detail);

/** Names the cause of a transport failure in words, and says whether retrying may help. */
function networkFailure(error: unknown, base: string): CallError {
  const err = error as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = err.cause?.code ?? err.code ?? '';
  const detail = err.cause?.message ?? err.message ?? String(error);
  if (isTlsFailure(code, detail)) {
    return new CallError(
      ExitCode.network,
      `TLS certificate of ${base} not trusted: ${detail} (${code || 'TLS'})`,
      'install the issuing CA in the system store or point NODE_EXTRA_CA_CERTS at it; sgq never skips verification',
      false,
    );
  }
  if (code === 'ENOTFOUND') return new CallError(ExitCode.network, `cannot resolve the host of ${base}`, 'check base-url and DNS', false);
  return outOfDescriptors(code, base) ?? new CallError(ExitCode.network, `cannot reach ${base}: ${inWords(code, detail)}`, 'check the network and base-url, or try again later', TRANSIENT_CODES.has(code));
}

/**
 * No descriptor left for a socket (EMFILE, ENFILE): not the network's fault, said in the words
 * every writer uses for it (src/fs/file-errors.ts: the limit, how to raise it); retried, as other
 * jobs may have given theirs back by then.
 */
function outOfDescriptors(code: string, base: string): CallError | undefined {
  if (code !== 'EMFILE' && code !== 'ENFILE') return undefined;
  const { cause, fix } = fileTrouble({ code });
  return new CallError(ExitCode.network, `cannot open a connection to ${base}: ${cause}`, fix, true);
}

const WORDS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  UND_ERR_SOCKET: 'connection closed by the other side',
  UND_ERR_CONNECT_TIMEOUT: 'connect timed out',
  UND_ERR_HEADERS_TIMEOUT: 'no answer in time',
  UND_ERR_BODY_TIMEOUT: 'the body stopped arriving',
  UND_ERR_DESTROYED: 'connection given up after another request timed out',
};

const inWords = (code: string, detail: string): string => WORDS[code] ?? `${detail}${code ? ` (${code})` : ''}`;

/** Codes of a connection that was never made: through a proxy, the proxy's. */
const CONNECT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH', 'ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT']);
const CLOSED_CODES = new Set([PROXY_CLOSED, 'UND_ERR_SOCKET', 'ECONNRESET']);

/** Names the proxy in a transport failure of a proxied run: every socket sgq opens goes to it. */
function proxyFailure(error: unknown, base: string, proxy: ProxyChoice): CallError {
  const err = error as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = err.cause?.code ?? err.code ?? '';
  const detail = err.cause?.message ?? err.message ?? String(error);
  const named = `the proxy ${maskedProxy(proxy.url)} (from ${proxy.source})`;
  const hint = `check ${proxy.source} or unset it`;
  const local = outOfDescriptors(code, base);
  if (local) return local;
  // undici words a proxy's answer to CONNECT, or a 407 to a forwarded request, with its status.
  const status = Number(/^Proxy (?:response|Authentication Required) \((\d{3})\)/.exec(err.message ?? '')?.[1]);
  if (status === 407) return new CallError(ExitCode.network, `${named} asks for credentials (HTTP 407)`, `put them in ${proxy.source} as http://USER:PASSWORD@HOST:PORT`, false);
  if (status >= 502 && status <= 504) return new CallError(ExitCode.network, `${named} could not reach ${base} (HTTP ${status})`, 'check base-url, or try again later', true);
  if (status) return new CallError(ExitCode.network, `${named} refused to connect to ${base} (HTTP ${status})`, hint, false);
  if (CONNECT_CODES.has(code)) return new CallError(ExitCode.network, `cannot reach ${named}: ${inWords(code, detail)}`, hint, TRANSIENT_CODES.has(code));
  if (CLOSED_CODES.has(code)) return new CallError(ExitCode.network, `cannot reach ${base} through ${named}: connection closed by the proxy`, hint, true);
  // A certificate is the service's own, checked through the tunnel.
  if (isTlsFailure(code, detail)) return networkFailure(error, base);
  return new CallError(ExitCode.network, `cannot reach ${base} through ${named}: ${inWords(code, detail)}`, hint, TRANSIENT_CODES.has(code));
}
