import type { KeySource } from './config.js';
import { ExitCode, SgqError, firstLine, type ErrorDetails } from './errors.js';
import { JsonTooDeep, RawNumber, numberValue, parseJson, stringifyJson, type Json } from './json.js';
import { requestsAnHour } from './rate-limits.js';
import { normalizeRoutePath } from './routes.js';
import { maskSecretsIn } from './secrets.js';

export type JsonObject = { [key: string]: Json };

/** A failed call, with what the retry policy needs to know about it. */
export class CallError extends SgqError {
  constructor(
    exitCode: SgqError['exitCode'],
    message: string,
    hint: string | undefined,
    readonly retryable: boolean,
    readonly retryAfterMs?: number,
    /** Error records of `data`, for the caller to report one by one. */
    readonly records: readonly string[] = [],
    details: ErrorDetails = {},
  ) {
    super(exitCode, message, hint, { ...details, ...(records.length ? { records } : {}) });
  }
}

/** Keys in first-seen order over the given records (the columns of CSV, a table, Parquet). */
export function unionKeys(records: readonly JsonObject[]): string[] {
  const keys = new Set<string>();
  for (const r of records) for (const k of Object.keys(r)) keys.add(k);
  return [...keys];
}

export const isObject = (v: Json | undefined): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof RawNumber);

/** Spec §2.2: an error record is an object whose `error` is a string. */
export const isErrorRecord = (v: Json): v is { error: string } => isObject(v) && typeof v.error === 'string';

/** What was asked, for messages that say what to fix: the request path and the key sent. */
export interface Asked {
  path?: string;
  key?: { masked: string; source?: KeySource };
  /** Keys to mask wherever the service's words echo them (a 401 body, an error record). */
  secrets?: readonly string[];
}

const RETRYABLE_STATUS = new Set([408, 429, 500, 502, 503, 504]);

/**
 * Reads one HTTP answer and decides what it is: a body to use, or a CallError saying which
 * exit code it maps to and whether trying again may help. The body decides before the
 * status does, because the spec leaves the status of data-level errors open.
 */
export function classify(status: number, headers: Record<string, string | string[] | undefined>, text: string, asked: Asked = {}): JsonObject {
  try {
    return classifyAnswer(status, headers, text, asked);
  } catch (error) {
    // Every failed answer carries its status, for library users who look past the message.
    if (!(error instanceof CallError)) throw error;
    error.details.status ??= status;
    throw asked.secrets?.length ? masked(error, asked.secrets) : error;
  }
}

/** The failure with the key masked in every word the service wrote into it: message, records, body. */
function masked(error: CallError, secrets: readonly string[]): CallError {
  const mask = (text: string) => maskSecretsIn(text, secrets);
  const { body, ...details } = error.details;
  const cleanBody = body === undefined ? {} : { body: parseJson(mask(stringifyJson(body as Json))) };
  return new CallError(error.exitCode, mask(error.message), error.hint && mask(error.hint), error.retryable, error.retryAfterMs, error.records.map(mask), { ...details, ...cleanBody });
}

function classifyAnswer(status: number, headers: Record<string, string | string[] | undefined>, text: string, asked: Asked): JsonObject {
  let body: Json | undefined;
  try {
    body = parseJson(text);
  } catch (error) {
    if (error instanceof JsonTooDeep) throw new CallError(ExitCode.network, `the service sent ${error.message}`, 'nothing of it was kept; report it to the service', false);
    body = undefined;
  }
  if (isObject(body)) {
    if (status === 429 && isSubscriptionBody(body)) {
      const parts = [`Endpoint: ${describe(body.Endpoint)}`, `Current credits: ${describe(body['Current credits'])}`];
      throw new CallError(ExitCode.expired, `${body.Error} (${parts.join(', ')})`, 'renew the subscription or buy credits; sgq does not retry this', false, undefined, [], { body });
    }
    if (status === 429 && isTrialLimitBody(body)) throw trialLimit(body, headers, asked);
    const data = Array.isArray(body.data) ? body.data : [];
    // Checked on every page, so the error records are only gathered when there are some.
    if (data.some(isErrorRecord)) {
      const records = data.filter(isErrorRecord).map((r) => r.error);
      if (status < 200 || status >= 300 || records.length === data.length) {
        // The body goes with it: it may carry the balance (`current_credits`), which `sgq credits --refresh` reads.
        throw new CallError(ExitCode.service, `the service answered: ${records.join('; ')}`, undefined, false, undefined, records, { body });
      }
    }
  }

  if (status === 401 || status === 403) {
    const [whose, hint, details] = rejectedKey(asked.key);
    throw new CallError(ExitCode.config, `the service rejected ${whose} (HTTP ${status}${messageOf(body, text)})`, hint, false, undefined, [], details);
  }
  if (RETRYABLE_STATUS.has(status)) {
    throw new CallError(ExitCode.network, `the service answered HTTP ${status}${messageOf(body, text)}`, 'try again later', true, parseRetryAfter(headers['retry-after']));
  }
  if (status >= 300 && status < 400) {
    const location = headers.location;
    throw new CallError(ExitCode.network, `the service redirected (HTTP ${status}) to ${describe(location as Json)}`, 'set base-url to the address it names', false);
  }
  if (status === 404 && asked.path) {
    throw new CallError(
      ExitCode.service,
      `the service has no route ${asked.path} (HTTP 404${messageOf(body, text)})`,
      'check base-url: if the service sits under a path prefix, include it, such as https://gateway.example.com/social',
      false,
    );
  }
  if (status >= 400 && status < 500) {
    throw new CallError(ExitCode.service, `the service refused the request (HTTP ${status}${messageOf(body, text)})`, undefined, false);
  }
  if (status < 200 || status >= 300) {
    throw new CallError(ExitCode.network, `the service failed (HTTP ${status}${messageOf(body, text)})`, 'try again later', false);
  }

  if (body === undefined) {
    const what = /^\s*</.test(text) ? 'an HTML page' : text.trim() === '' ? 'an empty body' : 'a body that is not valid JSON';
    throw new CallError(ExitCode.network, `the service sent ${what} instead of JSON`, 'check the base URL; a response hook shows the answer', false, undefined, [], { fix: 'check-address' });
  }
  if (!isObject(body)) throw new CallError(ExitCode.network, 'the service sent JSON that is not an object', undefined, false);
  const keys = Object.keys(body);
  if (keys.length === 1 && typeof body.message === 'string') {
    throw new CallError(ExitCode.unavailable, `route not available: ${body.message}`, 'no credits were spent', false);
  }
  return body;
}

/**
 * Spec §2.4: the subscription-expired 429 carries `Error`, `Endpoint` and `Current credits`.
 * Any other 429, a JSON `Error` string included, is a rate limit: retried as 503s are.
 */
function isSubscriptionBody(body: JsonObject): boolean {
  if (typeof body.Error !== 'string') return false;
  return 'Current credits' in body || /subscription expired/i.test(body.Error);
}

/**
 * service-facts.md ("Rate limits"): past a trial account's hourly limit on a route, a 429 with
 * `Error` "API rate limit exceeded", `Endpoint` and `Max Requests Per Hour`, and no Retry-After.
 */
function isTrialLimitBody(body: JsonObject): boolean {
  if (typeof body.Error !== 'string') return false;
  return 'Max Requests Per Hour' in body || /^API rate limit exceeded/i.test(body.Error);
}

/**
 * A trial limit: not retried at once, since only the hour frees a slot. The client decides
 * how long to wait (a Retry-After if one comes, else an hour) and whether --max-wait allows it.
 */
function trialLimit(body: JsonObject, headers: Record<string, string | string[] | undefined>, asked: Asked): CallError {
  const route = normalizeRoutePath((asked.path ?? describe(body.Endpoint)).replace(/^.*?\/api\//, ''));
  const limit = numberValue(body['Max Requests Per Hour']);
  const perHour = limit !== undefined && Number.isSafeInteger(limit) && limit > 0 ? limit : undefined;
  const allows = perHour === undefined ? 'has a limit of requests an hour' : `allows ${requestsAnHour(perHour)}`;
  return new CallError(ExitCode.quota, `${route} ${allows} on this account, and it is met (HTTP 429: ${firstLine(body.Error as string)})`, undefined, false, parseRetryAfter(headers['retry-after']), [], {
    body,
    route,
    ...(perHour === undefined ? {} : { limit: perHour }),
  });
}

/** Names the key the service rejected (masked) and where it came from, and what to do about it. */
function rejectedKey(key: Asked['key']): [string, string, ErrorDetails] {
  const source = key?.source;
  if (!key) return ['the request: it needs an API key', 'set the api-key setting or SGQ_API_KEY', { fix: 'set-key', setting: 'api-key' }];
  if (source && 'env' in source) return [`the API key from ${source.env} (${key.masked})`, `check it, or unset ${source.env} to use the key stored in the profile`, {}];
  const profile = source ? { profile: source.profile } : {};
  const whose = source ? `the API key of profile ${source.profile} (${key.masked})` : `the API key (${key.masked})`;
  return [whose, `check the api-key setting${source ? ` of profile ${source.profile}` : ''}, or set a new one`, { fix: 'check-key', setting: 'api-key', ...profile }];
}

function describe(value: Json | undefined): string {
  if (value === undefined) return 'unknown';
  return typeof value === 'string' ? value : stringifyJson(value);
}

/** `: <message>` from a JSON error body, or the start of a text body. */
function messageOf(body: Json | undefined, text: string): string {
  if (isObject(body)) {
    for (const key of ['message', 'detail', 'error', 'Error']) {
      const value = body[key];
      if (typeof value === 'string' && value) return `: ${firstLine(value)}`;
    }
  }
  if (/^\s*</.test(text)) return '';
  const snippet = firstLine(text.trim()).slice(0, 120);
  return snippet ? `: ${snippet}` : '';
}

/**
 * The longest Retry-After sgq reads, in ms: about 285,000 years. A longer one (a number of 400
 * digits is Infinity) is read as this, so a wait is always a finite number in messages.
 */
const LONGEST_RETRY_AFTER_MS = Number.MAX_SAFE_INTEGER;

/** Retry-After in seconds or as an HTTP date (RFC 9110 §10.2.3). */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return undefined;
  if (/^\d+$/.test(text.trim())) return Math.min(Number(text.trim()) * 1000, LONGEST_RETRY_AFTER_MS);
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
