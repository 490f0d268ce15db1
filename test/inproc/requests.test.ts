import { describe, expect, it } from 'vitest';
import { envelope, useStubs } from '../helpers/stub-server.js';
import { ndjson, runSgq } from '../helpers/run.js';

const stubs = useStubs();

const key = 'secret-key-123456';

describe('requests follow the graph-route convention', () => {
  it('POSTs {user, how, page} with x-api-key, JSON content type and Accept */*', async () => {
    const stub = await stubs([{ body: envelope(1, null, [{ username: 'a' }]) }]);
    const r = await runSgq(['graph', 'followers', 'jack'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: key } });
    expect(r.code).toBe(0);
    const [req] = stub.requests;
    expect(req!.method).toBe('POST');
    expect(req!.url).toBe('/api/graph/get_followers');
    expect(req!.headers['x-api-key']).toBe(key);
    expect(req!.headers['content-type']).toBe('application/json');
    expect(req!.headers.accept).toBe('*/*');
    expect(JSON.parse(req!.body)).toEqual({ user: 'jack', how: 'username', page: 1 });
    stub.assertDone();
  });

  it('keeps a base URL path prefix and ignores a trailing slash', async () => {
    const stub = await stubs([{ body: envelope(1, null, []) }, { body: envelope(1, null, []) }]);
    await runSgq(['graph', 'following', 'jack'], { env: { SGQ_BASE_URL: `${stub.url}/social/`, SGQ_API_KEY: key } });
    await runSgq(['graph', 'following', 'jack', '--base-url', `${stub.url}/social`], { env: { SGQ_API_KEY: key } });
    expect(stub.requests.map((r) => r.url)).toEqual(['/social/api/graph/get_following', '/social/api/graph/get_following']);
  });

  it('passes --how through and sends --since as UTC ISO', async () => {
    const stub = await stubs([{ body: envelope(2, null, []) }]);
    await runSgq(['graph', 'followers', '12345', '--how', 'user_id', '--page', '2', '--since', '2024-04-07T12:00:00+02:00'], {
      env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: key },
    });
    expect(stub.bodies()[0]).toEqual({ user: '12345', how: 'user_id', page: 2, since: '2024-04-07T10:00:00.000000+00:00' });
  });

  it('sends no page on routes without pages, and no key to userid and info', async () => {
    const stub = await stubs([{ body: { data: [{ user_id: '1' }] } }, { body: { data: [{ name: 'svc' }] } }]);
    const env = { SGQ_BASE_URL: stub.url };
    expect((await runSgq(['metadata', 'userid', 'jack'], { env })).code).toBe(0);
    expect((await runSgq(['info'], { env })).code).toBe(0);
    expect(stub.bodies()[0]).toEqual({ user: 'jack', how: 'username' });
    expect(stub.requests[1]!.url).toBe('/api/info');
    expect(stub.requests.every((r) => r.headers['x-api-key'] === undefined)).toBe(true);
  });

  it('sends the list id as user for lists routes', async () => {
    const stub = await stubs([{ body: { message: 'soon' } }]);
    const r = await runSgq(['lists', 'members', '987'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: key } });
    expect(r.code).toBe(6);
    expect(stub.requests[0]!.url).toBe('/api/lists/get_list_members');
    expect(stub.bodies()[0]).toEqual({ user: '987', how: 'username' });
  });

  it('prints records exactly as sent: numeric-looking ids stay strings, big numbers exact, unknown fields kept', async () => {
    const stub = await stubs([{ text: '{"data":[{"id":"0012","n":12345678901234567890,"new_field":{"x":[1,null]}}],"current_credits":1}' }]);
    const r = await runSgq(['metadata', 'latest-tweets', 'jack'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: key } });
    expect(r.stdout).toBe('{"id":"0012","n":12345678901234567890,"new_field":{"x":[1,null]}}\n');
  });
});

describe('pagination', () => {
  const pages = (n: number, per = 2) =>
    Array.from({ length: n }, (_, i) => ({
      body: envelope(i + 1, i + 1 < n ? i + 2 : null, Array.from({ length: per }, (_, j) => ({ username: `u${i * per + j}` })), 100 - i),
    }));

  it('--all follows next_page until null', async () => {
    const stub = await stubs(pages(3));
    const r = await runSgq(['graph', 'followers', 'jack', '--all'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: key } });
    expect(r.code).toBe(0);
    expect(ndjson(r.stdout).map((x) => x.username)).toEqual(['u0', 'u1', 'u2', 'u3', 'u4', 'u5']);
    expect(stub.bodies().map((b) => b.page)).toEqual([1, 2, 3]);
    stub.assertDone();
  });

  it('--page N --all starts at N', async () => {
    const stub = await stubs([{ body: envelope(3, 4, [{ username: 'x' }]) }, { body: envelope(4, null, [{ username: 'y' }]) }]);
    await runSgq(['graph', 'followers', 'jack', '--page', '3', '--all'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: key } });
    expect(stub.bodies().map((b) => b.page)).toEqual([3, 4]);
  });

  it('without --all asks one page and says there are more', async () => {
    const stub = await stubs(pages(3));
    const r = await runSgq(['graph', 'followers', 'jack'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: key } });
    expect(stub.requests).toHaveLength(1);
    expect(r.stderr).toContain('more pages');
  });

  it('--max-pages stops after N pages with exit 0', async () => {
    const stub = await stubs(pages(5));
    const r = await runSgq(['graph', 'followers', 'jack', '--all', '--max-pages', '2'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: key } });
    expect(r.code).toBe(0);
    expect(stub.requests).toHaveLength(2);
  });

  it('--limit gives exactly N records and asks no further page', async () => {
    const stub = await stubs(pages(5, 2));
    const r = await runSgq(['graph', 'followers', 'jack', '--all', '--limit', '3'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: key } });
    expect(r.code).toBe(0);
    expect(ndjson(r.stdout)).toHaveLength(3);
    expect(stub.requests).toHaveLength(2);
  });

  it('--max-credits stops before the spend would pass N, learning the price from balances', async () => {
    // Each page costs 10 credits: balances 990, 980, 970 …; the balance is read first, free.
    let pages = 0;
    const stub = await stubs((req) => {
      if (req.url.endsWith('/metadata/get_userid')) return { body: { data: [{ error: 'no data for username = jack' }], current_credits: 1000 - 10 * pages } };
      const n = ++pages;
      return { body: envelope(n, n + 1, [{ username: `u${n}` }], 1000 - 10 * n) };
    });
    const r = await runSgq(['graph', 'followers', 'jack', '--all', '--max-credits', '30', '-v'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: key } });
    expect(r.code).toBe(0);
    expect(stub.requests.map((q) => q.url)).toEqual(['/api/metadata/get_userid', ...Array(3).fill('/api/graph/get_followers')]);
    expect(r.stderr).toContain('--max-credits 30');
    expect(r.stderr).toContain('30 credits used, 970 credits left');
  });

  it('sends no paid request whose known price is above --max-credits', async () => {
    const stub = await stubs([]);
    const r = await runSgq(['metadata', 'latest-tweets', 'jack', '--max-credits', '5'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: key } });
    expect(r.code).toBe(0);
    expect(stub.requests).toHaveLength(0);
  });

  it('rejects a next_page that does not move forward (exit 7), keeping the records before it', async () => {
    const stub = await stubs([{ body: envelope(1, 2, [{ username: 'a' }]) }, { body: envelope(2, 2, [{ username: 'b' }]) }]);
    const r = await runSgq(['graph', 'followers', 'jack', '--all'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: key } });
    expect(r.code).toBe(7);
    expect(ndjson(r.stdout)).toEqual([{ username: 'a' }]);
    expect(r.stderr).toContain('next_page 2 does not move past page 2');
  });
});
