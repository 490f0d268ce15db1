import { ApiClient } from './client.js';
import { DEFAULT_RETRY } from './retry.js';
import type { ClientHooks, ClientSettings } from './settings.js';

/** The one place an ApiClient is made from settings. */
export function clientFromSettings(settings: ClientSettings, hooks: ClientHooks = {}): ApiClient {
  const { timeoutMs, retries, maxRetryAfterMs, maxWaitMs, ...rest } = settings;
  return new ApiClient({
    ...rest,
    timeoutMs,
    retry: { ...DEFAULT_RETRY, retries, maxRetryAfterMs, maxWaitMs },
    ...hooks,
  });
}
