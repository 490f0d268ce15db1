// Retry policy in the manner of the AWS CLI's "standard" mode: a few attempts, full-jitter
// exponential backoff, only for failures that another attempt can cure.

export interface RetryPolicy {
  retries: number;
  /** First backoff step; doubles each attempt. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** The longest Retry-After sgq agrees to wait; a longer one ends the retries. */
  maxRetryAfterMs: number;
  /** `--max-wait`: the longest Retry-After of a 429 (rate limit) waited out past that cap. */
  maxWaitMs?: number;
}

export const DEFAULT_RETRY: RetryPolicy = { retries: 3, baseDelayMs: 250, maxDelayMs: 20_000, maxRetryAfterMs: 60_000 };

/** Delay before retry number `attempt` (1-based), or undefined when the policy says stop. */
export function retryDelay(policy: RetryPolicy, attempt: number, retryAfterMs: number | undefined, random = Math.random): number | undefined {
  if (attempt > policy.retries) return undefined;
  if (retryAfterMs !== undefined) return retryAfterMs <= policy.maxRetryAfterMs ? retryAfterMs : undefined;
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/**
 * The wait before retrying a 429 whose Retry-After is past the cap, when `--max-wait` allows
 * it (cron jobs prefer a late export to none); undefined when it does not.
 */
export function rateLimitWait(policy: RetryPolicy, attempt: number, retryAfterMs: number): number | undefined {
  return attempt <= policy.retries && retryAfterMs <= (policy.maxWaitMs ?? 0) ? retryAfterMs : undefined;
}

/** Waits, unless the run is stopped first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
