// Hooks: what a client tells about each request, answer and retry, as octokit's `hook` does.
// The library's `createClient({ hooks })` and the CLI's `--verbose` lines and `--trace` file
// all stand on these; the key is masked in everything they are given.
//
// A hook only watches: one that throws does not break the call. Its error is reported once per
// client to `report` (the public entry makes it a process warning, code SGQ_HOOK_FAILED) and
// the call goes on.

/** A request about to be sent. */
export interface RequestEvent {
  /** The route below `/api/` (`graph/get_followers`). */
  route: string;
  method: string;
  url: string;
  /** Headers sent, the key masked. */
  headers: Record<string, string>;
  /** The JSON body sent (the key is never in it), or null for GET. */
  body: string | null;
  /** 0 for the first attempt, then 1, 2, … for retries. */
  retry: number;
  /** When it was sent (ISO 8601). */
  time: string;
}

/** What came back for a request, or how it failed. */
export interface ResponseEvent extends RequestEvent {
  /** HTTP status, or null when no answer came. */
  status: number | null;
  responseHeaders: Record<string, string | string[]> | null;
  /** Bytes of the body received. */
  bytes: number | null;
  /** Milliseconds from sending to the whole answer (0 from the cache). */
  ms: number;
  /** `current_credits` of the answer, where it has one. */
  creditsLeft: number | null;
  /** Answered from the cache: nothing was sent and nothing spent. */
  cached: boolean;
  /** Why the attempt failed (the answer's error, a timeout, a refused connection). */
  error?: string;
}

/** A failed attempt about to be tried again. */
export interface RetryEvent {
  route: string;
  /** The attempt coming: 1 for the first retry. */
  retry: number;
  /** Retries allowed in all. */
  retries: number;
  /** Milliseconds waited before it. */
  delayMs: number;
  /** What failed. */
  reason: string;
  status: number | null;
}

export interface SgqHooks {
  request?(event: RequestEvent): void;
  response?(event: ResponseEvent): void;
  retry?(event: RetryEvent): void;
}

type Events = { request: RequestEvent; response: ResponseEvent; retry: RetryEvent };

/** Calls one kind of hook of each set; a hook that throws is reported once and does not stop the call. */
export class HookRunner {
  private warned = false;

  constructor(
    private readonly hooks: readonly SgqHooks[],
    private readonly failed?: (message: string) => void,
  ) {}

  get empty(): boolean {
    return this.hooks.length === 0;
  }

  emit<K extends keyof Events>(name: K, event: Events[K]): void {
    for (const hooks of this.hooks) {
      const hook = hooks[name] as ((event: Events[K]) => void) | undefined;
      if (!hook) continue;
      try {
        hook.call(hooks, event);
      } catch (error) {
        this.report(name, error);
      }
    }
  }

  private report(name: string, error: unknown): void {
    if (this.warned) return;
    this.warned = true;
    const why = error instanceof Error ? error.message : String(error);
    this.failed?.(`a ${name} hook threw (${why}); sgq goes on and reports no further hook errors of this client`);
  }
}

/** One request and what came back (or how it failed), as `--trace` writes it and `onExchange` gets it. */
export interface Exchange {
  time: string;
  method: string;
  url: string;
  request_headers: Record<string, string>;
  request_body: string | null;
  status: number | null;
  response_headers: Record<string, string | string[]> | null;
  body_bytes: number | null;
  duration_ms: number;
  /** 0 for the first attempt of a call, then 1, 2, … for its retries. */
  retry: number;
  error?: string;
}

/** Hooks that hand each exchange sent (not those answered from the cache) to `write`. */
export function exchangeHooks(write: (exchange: Exchange) => void): SgqHooks {
  return {
    response(e) {
      if (e.cached) return;
      write({
        time: e.time,
        method: e.method,
        url: e.url,
        request_headers: e.headers,
        request_body: e.body,
        status: e.status,
        response_headers: e.responseHeaders,
        body_bytes: e.bytes,
        duration_ms: e.ms,
        retry: e.retry,
        ...(e.error === undefined ? {} : { error: e.error }),
      });
    },
  };
}
