// `--verbose`: a line for each request, answer and retry, built on the client's hooks (the
// library's `hooks` option sees the same events). The key is masked before they get here.
import type { SgqHooks } from '../../core/hooks.js';

export function verboseHooks(trace: (line: string) => void): SgqHooks {
  return {
    request(e) {
      const key = e.headers['x-api-key'];
      trace(`${e.method} ${e.url} ${e.body ?? ''}${key ? ` (x-api-key ${key})` : ''}`);
    },
    response(e) {
      if (e.cached) trace(`${e.method} ${e.url} ${e.body ?? ''}: from the cache, nothing sent`);
      else if (e.status !== null) trace(`HTTP ${e.status} in ${e.ms} ms, ${e.bytes ?? 0} bytes`);
    },
    retry(e) {
      trace(`retry ${e.retry}/${e.retries} of ${e.route} in ${e.delayMs} ms: ${e.reason}`);
    },
  };
}
