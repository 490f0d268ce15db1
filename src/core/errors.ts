// The exit-code contract. The README's table is written from this one; change both together.
export const ExitCode = {
  ok: 0,
  internal: 1,
  usage: 2,
  config: 3,
  service: 4,
  expired: 5,
  unavailable: 6,
  network: 7,
  /** Another sgq run holds the lock of the same --out or state file (--wait-lock waits). */
  locked: 8,
  /** A trial account's hourly request limit on a route (service-facts.md, "Rate limits"). */
  quota: 9,
  interrupted: 130,
  terminated: 143,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/** The kind of a failure, as library users test it (`error.kind === 'network'`). */
export type ErrorKind = Exclude<keyof typeof ExitCode, 'ok'>;

/** What each code means: for `sgq describe`, `--help` and the README's table. */
export const EXIT_MEANINGS: Record<keyof typeof ExitCode, string> = {
  ok: 'success (also an empty result, and a stop at a limit you set)',
  internal: 'unexpected internal error, or the output could not be written',
  usage: 'usage error: bad flag, bad argument, invalid --since; no request sent',
  config: 'no API key configured, or the key was rejected (401/403), or a setting is invalid',
  service: 'the service answered with an error record, or refused the request with another 4xx',
  expired: '429 with the subscription-expired body: subscription expired and credit value exceeded; never retried',
  unavailable: 'the route is not available yet (the {message} placeholder)',
  network: 'network or server failure: refused, reset, timeout, 5xx, a 429 rate limit after its retries, TLS, a body that is not the expected JSON',
  locked: 'another sgq run holds the lock of the same --out or state file (--wait-lock waits for it)',
  quota: 'a trial limit: 429 with "API rate limit exceeded", the requests an hour a route allows the account; the run stopped, saying when to go on',
  interrupted: 'interrupted (SIGINT)',
  terminated: 'terminated (SIGTERM)',
};

/** What a failed call carried, for programs that look deeper than the message. */
export interface ErrorDetails {
  // Mutable so that the layer that knows a fact (the status, the page) can add it on the way up.
  /** HTTP status of the answer, where there was one. */
  status?: number;
  /** Error records of `data` (spec §2.2), one string each. */
  records?: readonly string[];
  /** The body of the answer where it explains the failure (the 429 subscription-expired body). */
  body?: unknown;
  /** The page that failed, in a paginated run. */
  page?: number | null;
  /** The option the failure is about, as the library spells it (`since`, `timeout`, `maxWait`, `maxCredits`). */
  option?: string;
  /** The route called (`graph/get_followers`). */
  route?: string;
  /** What would fix it, for a front end to word in its own terms (the CLI names its flags). */
  fix?: Fix;
  /** The config profile involved, where there is one. */
  profile?: string;
  /** The setting involved (`api-key`, `timeout`), where there is one. */
  setting?: string;
  /** A trial limit: the requests an hour the route allows the account. */
  limit?: number;
  /** A trial limit: the earliest time the next request may go (ISO 8601 UTC). */
  retryAt?: string;
}

/**
 * What the user can do about a failure, beyond the library's own words in `hint`:
 * - `raise-option` / `set-option`: give `option` a larger value, or one at all;
 * - `see-answer`: look at the answer itself (the CLI: --verbose or --raw);
 * - `check-address`: check the service's base URL, and look at the answer;
 * - `set-key` / `check-key`: configure the API key, or check the one sent;
 * - `create-profile` / `fix-setting`: the config store's profile or setting;
 * - `name-key-field`: name the field that identifies an account (`option: 'key'`);
 * - `report-bug`: a failure of sgq itself.
 */
export type Fix = 'raise-option' | 'set-option' | 'see-answer' | 'check-address' | 'set-key' | 'check-key' | 'create-profile' | 'fix-setting' | 'name-key-field' | 'report-bug';

/** A failure the user can act on: one line of `message`, an optional `hint` saying what to do. */
export class SgqError extends Error {
  constructor(
    readonly exitCode: ExitCodeValue,
    message: string,
    readonly hint?: string,
    readonly details: ErrorDetails = {},
  ) {
    super(message);
    this.name = 'SgqError';
  }

  /** The exit code's name: 'usage', 'config', 'service', 'expired', 'unavailable', 'network', … */
  get kind(): ErrorKind {
    const entry = Object.entries(ExitCode).find(([, code]) => code === this.exitCode);
    return (entry?.[0] ?? 'internal') as ErrorKind;
  }
}

export const usageError = (message: string, hint?: string, details?: ErrorDetails) => new SgqError(ExitCode.usage, message, hint, details);
export const configError = (message: string, hint?: string, details?: ErrorDetails) => new SgqError(ExitCode.config, message, hint, details);

/**
 * When several users fail differently, the run exits with the most serious failure:
 * an interruption, then a rejected key, then the network, then a trial limit, then an
 * expired subscription, then a placeholder route, then error records.
 */
const severity: readonly number[] = [
  ExitCode.ok,
  ExitCode.service,
  ExitCode.unavailable,
  ExitCode.expired,
  ExitCode.quota,
  ExitCode.network,
  ExitCode.locked,
  ExitCode.internal,
  ExitCode.usage,
  ExitCode.config,
  ExitCode.interrupted,
  ExitCode.terminated,
];

export function worstExitCode(codes: Iterable<number>): number {
  let worst: number = ExitCode.ok;
  for (const code of codes) if (severity.indexOf(code) > severity.indexOf(worst)) worst = code;
  return worst;
}

/** How a command stopped by SIGINT or SIGTERM (the signal's name is the reason) ends: exit 130 or 143. */
export function interruptedBy(reason: unknown): SgqError {
  return new SgqError(reason === 'SIGTERM' ? ExitCode.terminated : ExitCode.interrupted, `interrupted by ${String(reason)}`);
}

/** Turn anything thrown into an SgqError, so every failure ends as one line with a code. */
export function toSgqError(error: unknown): SgqError {
  if (error instanceof SgqError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new SgqError(
    ExitCode.internal,
    `internal error: ${firstLine(message)}`,
    'this is a bug in sgq; please report it',
    { fix: 'report-bug' },
  );
}

/** `message; hint` as one line; a message's closing full stop (a service's words) does not meet the `;`. */
export function failureLine(message: string, hint?: string): string {
  return hint ? `${message.replace(/\.$/, '')}; ${hint}` : message;
}

export function firstLine(text: string): string {
  const line = text.split(/\r?\n/, 1)[0] ?? '';
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}
