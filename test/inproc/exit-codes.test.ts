import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { EXPIRED_KEY, LOW_KEY } from '../../src/sandbox/server.js';
import { ndjson, runSgq } from '../helpers/run.js';
import { useSandbox } from '../helpers/sandbox.js';
import { envelope, useStubs } from '../helpers/stub-server.js';

const sb = useSandbox();
const stubs = useStubs();

describe('exit codes', () => {
  it('0: success, and an empty result', async () => {
    const r = await runSgq(['graph', 'followers', 'jack'], { env: sb.env() });
    expect(r.code).toBe(0);
    expect(ndjson(r.stdout).length).toBeGreaterThan(0);
    const empty = await runSgq(['graph', 'followers', 'quiet_0'], { env: sb.env() });
    expect(empty.code).toBe(0);
    expect(empty.stdout).toBe('');
  });

  it('1: an unexpected internal error is one line, no stack trace', async () => {
    const broken = new PassThrough();
    broken.write = () => {
      throw new TypeError('boom');
    };
    const r = await runSgq(['graph', 'followers', 'jack'], { env: sb.env(), stdout: broken as never });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^sgq: jack: internal error: boom; [^\n]*\n$/);
    expect(r.stderr).not.toContain('    at ');
  });

  it.each([
    [['graph', 'followers'], 'missing required argument'],
    [['graph', 'followers', 'jack', '--bogus'], "unknown option '--bogus'"],
    [['graph', 'followers', 'jack', '--page', '0'], '--page must be a whole number'],
    [['graph', 'followers', 'jack', '--since', 'last tuesday'], 'invalid --since'],
    [['graph', 'followers', 'jack', '-o', 'xml'], 'Allowed choices are table, json, ndjson, csv'],
    [['graph', 'followers', 'jack', '--raw', '-o', 'csv'], 'cannot be used with'],
    [['metadata', 'userid', 'jack', '--all'], "unknown option '--all'"],
    [['nosuch'], "unknown command 'nosuch'"],
    [['api', 'graph/get_followers', '-f', 'novalue'], 'invalid -f'],
  ])('2: usage error %j, no request sent', async (argv, words) => {
    const before = sb.sandbox.calls.size === 0 ? 0 : [...sb.sandbox.calls.values()].reduce((a, b) => a + b, 0);
    const r = await runSgq(argv, { env: sb.env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(words);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    const after = [...sb.sandbox.calls.values()].reduce((a, b) => a + b, 0);
    expect(after).toBe(before);
  });

  it('3: a paid route with no key exits before any request, saying how to set one', async () => {
    const stub = await stubs([]);
    const r = await runSgq(['graph', 'followers', 'jack'], { env: { SGQ_BASE_URL: stub.url } });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('sgq config set api-key');
    expect(stub.requests).toHaveLength(0);
  });

  it('3: no key, with nothing configured (the base URL has a default): before any request', async () => {
    const r = await runSgq(['graph', 'followers', 'jack'], {});
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('no API key configured');
  });

  it('3: a rejected key (401/403), never echoing the key', async () => {
    const r = await runSgq(['graph', 'followers', 'jack'], { env: { ...sb.env(), SGQ_API_KEY: 'wrong-key-abcdef' } });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('HTTP 401');
    expect(r.stderr).not.toContain('wrong-key-abcdef');
    const stub = await stubs([{ status: 403, body: { detail: 'Forbidden' } }]);
    const f = await runSgq(['graph', 'followers', 'jack'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k' } });
    expect(f.code).toBe(3);
  });

  it('4: an error record goes to stderr, never stdout, whatever the status', async () => {
    const r = await runSgq(['graph', 'followers', 'nobody'], { env: sb.env() });
    expect(r.code).toBe(4);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('no data for username = nobody');
    const stub = await stubs([{ status: 404, body: { data: [{ error: 'no data for username = x' }], current_credits: 5 } }]);
    const s = await runSgq(['graph', 'followers', 'x'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k' } });
    expect(s.code).toBe(4);
    expect(s.stdout).toBe('');
    expect(s.stderr).toContain('no data for username = x');
  });

  it("4: the service's since errors", async () => {
    const stub = await stubs([{ body: envelope(1, null, [{ error: "Invalid 'since' parameter format. It should be an ISO formatted datetime string." }]) }]);
    const r = await runSgq(['graph', 'followers', 'x', '--since', '2024-01-01'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k' } });
    expect(r.code).toBe(4);
    expect(r.stderr).toContain("Invalid 'since' parameter format");
  });

  it('4: other 4xx show the status and message', async () => {
    const stub = await stubs([{ status: 422, body: { detail: 'user is required' } }]);
    const r = await runSgq(['graph', 'followers', 'x'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k' } });
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('HTTP 422: user is required');
  });

  it('5: subscription expired shows Endpoint and Current credits and is not retried', async () => {
    const before = sb.sandbox.calls.get('graph/get_followers') ?? 0;
    const r = await runSgq(['graph', 'followers', 'jack'], { env: { ...sb.env(), SGQ_API_KEY: EXPIRED_KEY } });
    expect(r.code).toBe(5);
    expect(r.stderr).toContain('Subscription expired and credit value exceeded');
    expect(r.stderr).toContain('Endpoint: /graph/get_followers');
    expect(r.stderr).toContain('Current credits: 0');
    expect(sb.sandbox.calls.get('graph/get_followers')).toBe(before + 1);
  });

  it('5: credits running out mid-run keeps the pages already written', async () => {
    const r = await runSgq(['graph', 'followers', 'big_30000', '--all'], { env: { ...sb.env(), SGQ_API_KEY: LOW_KEY } });
    expect(r.code).toBe(5);
    // 20 credits pay for 6 pages at 3 credits each.
    expect(ndjson(r.stdout)).toHaveLength(6 * 500);
  });

  it('6: a placeholder route shows its message', async () => {
    const r = await runSgq(['lists', 'latest-tweets', '42'], { env: sb.env() });
    expect(r.code).toBe(6);
    expect(r.stderr).toContain('This endpoint is not available yet');
    expect(r.stdout).toBe('');
  });

  it('7: connection refused', async () => {
    const r = await runSgq(['info', '--retries', '0'], { env: { SGQ_BASE_URL: 'http://127.0.0.1:1' } });
    expect(r.code).toBe(7);
    expect(r.stderr).toContain('connection refused');
  });

  it('7: a 5xx after retries, and a body that is not JSON', async () => {
    let stub = await stubs([{ status: 502, text: '<html>bad gateway</html>' }, { status: 502, text: '<html>bad gateway</html>' }]);
    const r = await runSgq(['graph', 'followers', 'x', '--retries', '1'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k' } });
    expect(r.code).toBe(7);
    expect(r.stderr).toContain('HTTP 502');
    expect(r.stderr).toContain('after 1 retry)');
    stub = await stubs([{ text: '<html>login</html>' }]);
    const h = await runSgq(['graph', 'followers', 'x'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k' } });
    expect(h.code).toBe(7);
    expect(h.stderr).toContain('HTML page');
  });

  it('130: interrupted, after finishing what was written', async () => {
    const controller = new AbortController();
    const stub = await stubs((_req, n) => {
      if (n === 2) controller.abort('SIGINT');
      return { body: envelope(n, n + 1, [{ username: `u${n}` }]) };
    });
    const r = await runSgq(['graph', 'followers', 'x', '--all'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k' }, signal: controller.signal });
    expect(r.code).toBe(130);
    expect(ndjson(r.stdout).map((x) => x.username)).toEqual(['u1']);
    expect(r.stderr).toContain('interrupted by SIGINT');
    expect(stub.requests.length).toBeLessThanOrEqual(2);
  });

  it('143: terminated by SIGTERM', async () => {
    const controller = new AbortController();
    controller.abort('SIGTERM');
    const r = await runSgq(['graph', 'followers', 'jack', '--all'], { env: sb.env(), signal: controller.signal });
    expect(r.code).toBe(143);
  });
});
