// The core's public wiring: the settings of a client, typed once and resolved by one rule
// (given > config > default). clientFromSettings (client-from-settings.ts) builds the client
// from them; `createClient` (the library) and the CLI both stand on the two, so a default, a
// unit or a hook is decided here and nowhere else. Nothing here loads the network stack.
import type { ClientOptions as ApiClientOptions } from './client.js';
import type { Env, KeySource, ResolvedConfig } from './config.js';
import { configError } from './errors.js';
import type { ProxyChoice } from './proxy.js';
import { DEFAULT_RETRY } from './retry.js';
import { durationMs } from './since.js';
import { positiveSeconds } from './values.js';
import { trialHourMs } from './rate-limits.js';

/** Per-request time limit when neither a caller nor the config gives one. */
export const DEFAULT_TIMEOUT_MS = 30_000;

/** Where calls go and with which key. */
export interface EndpointSettings {
  baseUrl: string;
  apiKey?: string;
  /** Where the key came from, named when the service rejects it. */
  apiKeySource?: KeySource;
}

/** Everything a client needs, in the units it uses: resolved once from flags, options, env and profile. */
export interface ClientSettings extends EndpointSettings {
  timeoutMs: number;
  retries: number;
  /** The longest Retry-After waited without `maxWaitMs` (60 s, or SGQ_RETRY_AFTER_CAP). */
  maxRetryAfterMs: number;
  /** `--max-wait` / `maxWait`: a 429's Retry-After waited out past that cap, up to this long. */
  maxWaitMs?: number;
  /** The proxy to go through, or none (the CLI chooses it with proxyFor). */
  proxy?: ProxyChoice;
  /** Sockets per origin: the requests kept in flight at once. */
  connections: number;
  /** A great many calls are coming (a list on stdin): undici's pool from the first. */
  manyCalls?: boolean;
  /** Environment read for CA certificates. */
  env: Env;
  /** The hour of a trial limit (SGQ_TRIAL_HOUR_MS shortens it for the tests). */
  trialHourMs?: number;
}

/** What a client reports to, and the answers it may reuse: none of it changes what is sent. */
export type ClientHooks = Pick<ApiClientOptions, 'signal' | 'trace' | 'hooks' | 'hookFailed' | 'onLongWait' | 'beforeUndici' | 'exitCloses' | 'cache' | 'pacer'>;

/** The numeric settings of a profile, parsed once from the checked strings of the config. */
export interface TypedSettings {
  timeoutMs?: number;
  retries?: number;
  parallel?: number;
  warnCredits?: number;
  cacheMs?: number;
}

export function typedSettings(config: ResolvedConfig | undefined): TypedSettings {
  // The strings were checked by validateSetting, so Number() reads them exactly.
  const num = (text: string | undefined) => (text === undefined ? undefined : Number(text));
  const timeout = num(config?.timeout);
  return {
    timeoutMs: timeout === undefined ? undefined : timeout * 1000,
    retries: num(config?.retries),
    parallel: num(config?.parallel),
    warnCredits: num(config?.warnCredits),
    cacheMs: config?.cache === undefined ? undefined : durationMs(config.cache),
  };
}

/** What a caller gave (flags, createClient or call options), in the units of ClientSettings. */
export interface GivenSettings {
  timeoutMs?: number;
  retries?: number;
  maxWaitMs?: number;
}

/**
 * A client's settings by precedence: given > config (environment, then profile) > default.
 * Connections, proxy and manyCalls belong to a run, so the caller adds them.
 */
export function resolveClientSettings(endpoint: EndpointSettings, given: GivenSettings, config: ResolvedConfig | undefined, env: Env): Omit<ClientSettings, 'connections'> {
  const typed = typedSettings(config);
  const { baseUrl, apiKey, apiKeySource } = endpoint;
  return {
    baseUrl,
    apiKey,
    apiKeySource,
    timeoutMs: given.timeoutMs ?? typed.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    retries: given.retries ?? typed.retries ?? DEFAULT_RETRY.retries,
    maxRetryAfterMs: retryAfterCapMs(env),
    maxWaitMs: given.maxWaitMs,
    env,
    trialHourMs: trialHourMs(env),
  };
}

/**
 * The longest Retry-After waited without --max-wait: 60 s, or SGQ_RETRY_AFTER_CAP seconds
 * (lower it to fail fast at a terminal; the tests lower it to meet --max-wait in seconds).
 */
export function retryAfterCapMs(env: Env): number {
  const text = env.SGQ_RETRY_AFTER_CAP;
  if (!text) return DEFAULT_RETRY.maxRetryAfterMs;
  try {
    return positiveSeconds(text) * 1000;
  } catch {
    throw configError(`invalid SGQ_RETRY_AFTER_CAP ${JSON.stringify(text)}`, 'give seconds, such as 60, or unset it');
  }
}
