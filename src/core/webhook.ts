import { CallError, parseRetryAfter } from './classify.js';
import { casFor, transportFailure, transportTo } from './client.js';
import { maskSecret } from './config.js';
import { ExitCode } from './errors.js';
import { HookRunner, type RequestEvent, type SgqHooks } from './hooks.js';
import type { ProxyChoice } from './proxy.js';
import { retryDelay, sleep, type RetryPolicy } from './retry.js';

// One POST of a JSON body to any address: a notification to a webhook (Slack, Discord, a
// script's own receiver). It goes the way the client's calls go (client.ts's transport, the
// same proxy rules, time limit and retries, with their backoff) and is watched by the same
// hooks (--verbose, --trace), with the address masked wherever it shows: a webhook's address
// is its secret.

export interface PostOptions {
  /** Per attempt. */
  timeoutMs: number;
  retry: RetryPolicy;
  env: Record<string, string | undefined>;
  /** The proxy to go through (proxyFor of the address), or none. */
  proxy?: ProxyChoice;
  hooks?: readonly SgqHooks[];
  /** Stops the post (Ctrl-C): it then fails with the signal's reason. */
  signal?: AbortSignal;
}

/** The largest answer read: a receiver says "ok", not more. */
const MAX_ANSWER_BYTES = 1024 * 1024;

/** What hooks and messages call the request. */
const ROUTE = 'notify';

/**
 * POSTs `body` (JSON text) to `url`; resolves with the status of a 2xx answer. A refused or
 * reset connection, a timeout, a 429 or a 5xx is tried again as the client's calls are; any
 * failure left is thrown as a CallError whose words show the address masked.
 */
export async function postJson(url: string, body: string, options: PostOptions): Promise<number> {
  const target = new URL(url);
  const shown = maskSecret(url);
  const transport = transportTo(target.origin, { timeoutMs: options.timeoutMs, connections: 1, proxy: options.proxy, ca: casFor(target.origin, options.env) });
  const hooks = new HookRunner(options.hooks ?? []);
  try {
    for (let attempt = 1; ; attempt++) {
      const event: RequestEvent = { route: ROUTE, method: 'POST', url: shown, headers: { 'content-type': 'application/json' }, body: null, retry: attempt - 1, time: new Date().toISOString() };
      try {
        return await once(transport, `${target.pathname}${target.search}`, body, { ...options, shown, event, runner: hooks });
      } catch (error) {
        if (!(error instanceof CallError)) throw error;
        const delay = error.retryable ? retryDelay(options.retry, attempt, error.retryAfterMs) : undefined;
        if (delay === undefined) throw attempt > 1 ? new CallError(error.exitCode, `${error.message} (after ${attempt - 1} ${attempt === 2 ? 'retry' : 'retries'})`, error.hint, false) : error;
        hooks.emit('retry', { route: ROUTE, retry: attempt, retries: options.retry.retries, delayMs: delay, reason: error.message, status: error.details.status ?? null });
        await sleep(delay, options.signal);
      }
    }
  } finally {
    await transport.destroy().catch(() => undefined);
  }
}

/** One attempt within the time limit: the status of a 2xx answer, else a CallError saying whether another attempt may help. */
async function once(
  transport: ReturnType<typeof transportTo>,
  path: string,
  body: string,
  { timeoutMs, proxy, signal, shown, event, runner }: PostOptions & { shown: string; event: RequestEvent; runner: HookRunner },
): Promise<number> {
  signal?.throwIfAborted();
  runner.emit('request', event);
  const started = Date.now();
  const sent = transport.request({ path, method: 'POST', headers: { 'content-type': 'application/json', 'user-agent': 'sgq', accept: '*/*' }, body, maxBodyBytes: MAX_ANSWER_BYTES });
  let expired = false;
  const timer = setTimeout(() => {
    expired = true;
    sent.abort();
  }, timeoutMs);
  const stop = () => sent.abort();
  signal?.addEventListener('abort', stop, { once: true });
  const answered = (status: number | null, bytes: number | null, error?: string) =>
    runner.emit('response', { ...event, status, responseHeaders: null, bytes, ms: Date.now() - started, creditsLeft: null, cached: false, ...(error ? { error } : {}) });
  try {
    const { statusCode, headers, text } = await sent.response;
    const failure = statusCode >= 200 && statusCode < 300 ? undefined : refused(shown, statusCode, text, parseRetryAfter(headers['retry-after']));
    answered(statusCode, Buffer.byteLength(text), failure?.message);
    if (failure) throw failure;
    return statusCode;
  } catch (thrown) {
    if (thrown instanceof CallError) throw thrown;
    signal?.throwIfAborted();
    const error = expired
      ? new CallError(ExitCode.network, `no answer from ${shown} within ${timeoutMs / 1000}s`, 'try again later', true)
      : transportFailure(thrown, shown, proxy);
    answered(sent.head?.statusCode ?? null, null, error.message);
    throw error;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', stop);
  }
}

/** A receiver's refusal: a 429 or a 5xx may pass, anything else will not. */
function refused(shown: string, status: number, text: string, retryAfterMs: number | undefined): CallError {
  const said = text.trim().split('\n')[0]!.slice(0, 200);
  const transient = status === 429 || status >= 500;
  return new CallError(ExitCode.network, `${shown} answered HTTP ${status}${said ? `: ${said}` : ''}`, transient ? 'try again later' : 'check the notify address', transient, retryAfterMs, [], { status });
}
