import { describe, expect, it } from 'vitest';
import { createClient, type RequestEvent, type ResponseEvent, type RetryEvent, type SgqHooks } from '../../src/lib.js';
import { tempDir } from '../helpers/run.js';
import { envelope, useStubs } from '../helpers/stub-server.js';

const stub = useStubs();
const KEY = 'hook-test-secret-key-1234';
const env = () => ({ SGQ_CONFIG_DIR: tempDir(), SGQ_RETRY_AFTER_CAP: '60' });

function recorder() {
  const seen: { requests: RequestEvent[]; responses: ResponseEvent[]; retries: RetryEvent[] } = { requests: [], responses: [], retries: [] };
  const hooks: SgqHooks = {
    request: (e) => void seen.requests.push(e),
    response: (e) => void seen.responses.push(e),
    retry: (e) => void seen.retries.push(e),
  };
  return { seen, hooks };
}

describe('createClient({ hooks })', () => {
  it('sees each request, answer and retry: route, body, status, milliseconds, credits left, the retry, never the key', async () => {
    const s = await stub([
      { status: 503, body: { message: 'Service Unavailable' }, headers: { 'retry-after': '0' } },
      { body: envelope(1, 2, [{ username: 'a' }], 97) },
      { body: envelope(2, null, [{ username: 'b' }], 94) },
    ]);
    const { seen, hooks } = recorder();
    const sgq = createClient({ baseUrl: s.url, apiKey: KEY, env: env(), hooks });
    expect((await sgq.graph.followers('jack').toArray({ all: true })).map((r) => r.username)).toEqual(['a', 'b']);
    expect(seen.requests.map((e) => [e.route, e.retry])).toEqual([['graph/get_followers', 0], ['graph/get_followers', 1], ['graph/get_followers', 0]]);
    expect(JSON.parse(seen.requests[0]!.body!)).toEqual({ user: 'jack', how: 'username', page: 1 });
    expect(seen.responses.map((e) => [e.status, e.creditsLeft, e.retry, e.cached])).toEqual([[503, null, 0, false], [200, 97, 1, false], [200, 94, 0, false]]);
    for (const e of seen.responses) expect(e.ms).toBeGreaterThanOrEqual(0);
    expect(seen.responses[0]!.error).toMatch(/HTTP 503/);
    expect(seen.retries).toEqual([{ route: 'graph/get_followers', retry: 1, retries: 3, delayMs: expect.any(Number), reason: expect.stringMatching(/HTTP 503/), status: 503 }]);
    expect(JSON.stringify(seen)).not.toContain(KEY);
    expect(seen.requests[0]!.headers['x-api-key']).toMatch(/\*/);
    await sgq.close();
  });

  it('a hook that throws does not break the run: the records come, one warning a client says so', async () => {
    const pages = [{ body: envelope(1, 2, [{ username: 'a' }]) }, { body: envelope(2, null, [{ username: 'b' }]) }];
    const s = await stub([...pages, ...pages]);
    const warnings: Error[] = [];
    const onWarning = (w: Error) => void warnings.push(w);
    process.on('warning', onWarning);
    try {
      let calls = 0;
      const hooks: SgqHooks = {
        response() {
          calls++;
          throw new Error('the hook broke');
        },
      };
      const sgq = createClient({ baseUrl: s.url, apiKey: KEY, env: env(), hooks });
      expect(await sgq.graph.followers('jack').toArray({ all: true })).toHaveLength(2);
      // A second iteration of the same client: its pool is new, the warning is not.
      expect(await sgq.graph.followers('jack').toArray({ all: true })).toHaveLength(2);
      expect(calls).toBe(4);
      // Warnings are emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
      const ours = warnings.filter((w) => (w as Error & { code?: string }).code === 'SGQ_HOOK_FAILED');
      expect(ours).toHaveLength(1);
      expect(ours[0]!.message).toContain('the hook broke');
    } finally {
      process.off('warning', onWarning);
    }
  });
});
