import { describe, expect, it } from 'vitest';
import { lines, ndjson, runSgq } from '../helpers/run.js';
import { envelope, useStubs } from '../helpers/stub-server.js';

// Issue 18, "Messages and exits": what sgq says and how it exits when the service's answer is
// a rate limit, echoes the key, or is not the text it claims to be.

const stubs = useStubs();

describe('a 429 is a rate limit unless its body is the subscription body (#13)', () => {
  const SUBSCRIPTION = { Error: 'Subscription expired and credit value exceeded', Endpoint: '/graph/get_followers', 'Current credits': 0 };

  it('retries a 429 with Retry-After and a JSON Error string, then goes on to every user', async () => {
    const stub = await stubs((req, n) => {
      if (n === 1) return { status: 429, body: { Error: 'Too many requests, slow down' }, headers: { 'retry-after': '1' } };
      const user = (JSON.parse(req.body) as { user: string }).user;
      return { body: envelope(1, null, [{ username: `${user}-f` }], 100, user) };
    });
    const r = await runSgq(['graph', 'followers', 'a', 'b', '-v'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k' } });
    expect(r.code).toBe(0);
    expect(ndjson(r.stdout).map((x) => x.username).sort()).toEqual(['a-f', 'b-f']);
    expect(r.stderr).toContain('in 1000 ms: the service answered HTTP 429: Too many requests');
    expect(stub.requests).toHaveLength(3);
  });

  it('a rate limit that outlasts the retries is a transient failure (exit 7), not an expired subscription', async () => {
    const stub = await stubs(() => ({ status: 429, body: { Error: 'Too many requests' }, headers: { 'retry-after': '0' } }));
    const r = await runSgq(['graph', 'followers', 'a', '--retries', '1'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k' } });
    expect(r.code).toBe(7);
    expect(stub.requests).toHaveLength(2);
    expect(lines(r.stderr).join('\n')).not.toMatch(/renew the subscription/);
  });

  it('the spec body still exits 5 and is never retried, even with a Retry-After', async () => {
    const stub = await stubs(() => ({ status: 429, body: SUBSCRIPTION, headers: { 'retry-after': '1' } }));
    const r = await runSgq(['graph', 'followers', 'a'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k' } });
    expect(r.code).toBe(5);
    expect(stub.requests).toHaveLength(1);
    expect(r.stderr).toContain('Subscription expired and credit value exceeded');
  });
});
