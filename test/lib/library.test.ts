import { execa } from 'execa';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ROUTES, SgqError, createClient, methodName, type CachedAnswer, type Exchange, type ResponseCache, type SgqClient } from '../../src/lib.js';
import { DEMO_KEY, EXPIRED_KEY } from '../../src/sandbox/index.js';
import { tempDir } from '../helpers/run.js';
import { useSandbox } from '../helpers/sandbox.js';
import { envelope, useStubs } from '../helpers/stub-server.js';

const sb = useSandbox();
const stub = useStubs();
const client = (extra: Parameters<typeof createClient>[0] = {}) =>
  createClient({ baseUrl: sb.sandbox.url, apiKey: DEMO_KEY, env: { SGQ_CONFIG_DIR: tempDir() }, ...extra });
const calls = () => [...sb.sandbox.calls.values()].reduce((a, b) => a + b, 0);

describe('the library: credits options', () => {
  it('onExchange sees every exchange with the key masked; a cache answers a repeat without a request', async () => {
    const exchanges: Exchange[] = [];
    const kept = new Map<string, CachedAnswer>();
    const cache: ResponseCache = { get: (r) => kept.get(r.url + r.body), put: (r, a) => void kept.set(r.url + r.body, a) };
    const sgq = client({ onExchange: (e) => exchanges.push(e), cache });
    const first = await sgq.graph.followers('lib_600').toArray({ all: true });
    expect(exchanges.map((e) => [e.status, e.retry])).toEqual([[200, 0], [200, 0]]);
    expect(JSON.stringify(exchanges)).not.toContain(DEMO_KEY);
    const before = calls();
    const again = sgq.graph.followers('lib_600');
    expect(await again.toArray({ all: true })).toEqual(first);
    expect(calls()).toBe(before);
    expect(again.result).toMatchObject({ pages: 2, creditsUsed: 0 });
    await sgq.close();
  });
});

describe('the library: toArray asks for a cap', () => {
  it('without one it is a TypeError, for the compiler too, and sends no request', async () => {
    const records = client().graph.followers('cap_1200');
    const before = calls();
    // @ts-expect-error toArray takes a cap: the compiler rejects a call without one
    await expect(records.toArray()).rejects.toThrow(TypeError);
    // @ts-expect-error an empty cap is no cap
    await expect(records.toArray({})).rejects.toThrow(TypeError);
    // @ts-expect-error all: false asks for nothing
    await expect(records.toArray({ all: false })).rejects.toThrow(TypeError);
    const error = await records.toArray(null as never).then(() => undefined, (e: unknown) => e as Error);
    expect(error).toBeInstanceOf(TypeError);
    expect(error!.message).toBe('toArray() needs a cap: pass { limit }, { maxPages } or { maxCredits }, or { all: true } to collect every record');
    expect(calls()).toBe(before);
  });

  it('stops at the cap it is given, and all: true takes every record', async () => {
    const sgq = client();
    const limited = sgq.graph.followers('cap_1200');
    expect(await limited.toArray({ limit: 700 })).toHaveLength(700);
    expect(limited.result).toMatchObject({ stoppedBy: 'limit', records: 700, pages: 2 });
    const paged = sgq.graph.followers('cap_1200');
    expect(await paged.toArray({ maxPages: 1 })).toHaveLength(500);
    expect(paged.result).toMatchObject({ stoppedBy: 'max-pages', pages: 1 });
    // Whatever a call costs, 0 credits pay for none; a few pay for fewer than all three pages.
    const free = sgq.graph.followers('cap_1200');
    expect(await free.toArray({ maxCredits: 0 })).toEqual([]);
    expect(free.result).toMatchObject({ stoppedBy: 'max-credits', pages: 0 });
    const credited = sgq.graph.followers('cap_1200');
    const some = await credited.toArray({ maxCredits: 2 });
    expect(some.length).toBeLessThan(1200);
    expect(credited.result).toMatchObject({ stoppedBy: 'max-credits', records: some.length });
    expect(credited.result!.creditsUsed).toBeLessThanOrEqual(2);
    const all = sgq.graph.followers('cap_1200');
    expect(await all.toArray({ all: true })).toHaveLength(1200);
    expect(all.result).toMatchObject({ stoppedBy: 'done', pages: 3 });
  });

  it("adds its cap to the call's own: the lower one wins", async () => {
    const sgq = client();
    expect(await sgq.graph.followers('cap_1200', { limit: 700 }).toArray({ limit: 900 })).toHaveLength(700);
    expect(await sgq.graph.followers('cap_1200', { limit: 700 }).toArray({ limit: 20 })).toHaveLength(20);
    expect(await sgq.graph.followers('cap_1200', { maxPages: 1 }).toArray({ limit: 900 })).toHaveLength(500);
    expect(await sgq.graph.followers('cap_1200', { limit: 30 }).toArray({ all: true })).toHaveLength(30);
  });

  it('checks the cap as the call options are checked, before any request', async () => {
    const records = client().graph.followers('cap_1200');
    const before = calls();
    await expect(records.toArray({ limit: 0 })).rejects.toMatchObject({ kind: 'usage', message: expect.stringContaining('limit') });
    await expect(records.toArray({ maxPages: 1.5 })).rejects.toMatchObject({ kind: 'usage', message: expect.stringContaining('maxPages') });
    await expect(records.toArray({ maxCredits: -1 })).rejects.toMatchObject({ kind: 'usage', message: expect.stringContaining('maxCredits') });
    expect(calls()).toBe(before);
  });
});

describe('the library', () => {
  it('has one method per route of the table, named after the CLI verb', () => {
    const sgq = client() as unknown as Record<string, Record<string, unknown>>;
    for (const route of ROUTES) {
      const method = route.namespace ? sgq[route.namespace]?.[methodName(route.verb)] : sgq[route.verb];
      expect(typeof method, `${route.namespace} ${route.verb}`).toBe('function');
    }
    const perUser = ['graph', 'alpha', 'metadata', 'lists'].flatMap((ns) => Object.keys(sgq[ns]!).map((m) => `${ns}.${m}`));
    expect(perUser.sort()).toEqual(ROUTES.filter((r) => r.namespace).map((r) => `${r.namespace}.${methodName(r.verb)}`).sort());
  });

  it('iterates every record of every page, and honours limit exactly', async () => {
    const sgq = client();
    const names: string[] = [];
    for await (const f of sgq.graph.followers('lib_1200')) names.push(f[sb.name()] as string);
    expect(names).toHaveLength(1200);
    expect(new Set(names).size).toBe(1200);
    const limited = sgq.graph.followers('lib_1200', { limit: 700 });
    let taken = 0;
    for await (const f of limited) taken += f[sb.name()] === undefined ? 0 : 1;
    expect(taken).toBe(700);
    expect(limited.result).toMatchObject({ stoppedBy: 'limit', records: 700, pages: 2 });
  });

  it('fetches lazily: a break sends no further request', async () => {
    const sgq = client();
    const before = calls();
    let seen = 0;
    for await (const f of sgq.graph.followers('lazy_5000')) {
      expect(f[sb.name()]).toBeTypeOf('string');
      if (++seen === 3) break;
    }
    expect(calls() - before).toBe(1);
  });

  it('pages() gives page numbers, next pages and the balance', async () => {
    const pages = [];
    for await (const page of client().graph.followers('paged_1200', { page: 2 }).pages()) pages.push(page);
    expect(pages.map((p) => [p.page, p.nextPage, p.records.length])).toEqual([[2, 3, 500], [3, null, 200]]);
    expect(pages[1]!.creditsLeft).toBeTypeOf('number');
  });

  it('checks since before any request, and sends it in UTC', async () => {
    const sgq = client();
    const before = calls();
    expect(() => sgq.graph.followers('jack', { since: 'yesterday' })).toThrow(SgqError);
    try {
      sgq.graph.followers('jack', { since: 'yesterday' });
    } catch (error) {
      expect(error).toMatchObject({ kind: 'usage', exitCode: 2 });
    }
    expect(() => sgq.metadata.tweets('jack', { since: '7d' })).toThrow(/since is not accepted/);
    expect(calls()).toBe(before);
    const s = await stub([{ body: envelope(1, null, [{ username: 'a' }]) }]);
    await createClient({ baseUrl: s.url, apiKey: 'k' }).graph.followers('jack', { since: '2024-04-07T14:00:00+02:00' }).toArray({ all: true });
    expect(s.bodies()[0]).toEqual({ user: 'jack', how: 'username', page: 1, since: '2024-04-07T12:00:00.000000+00:00' });
  });

  it('keeps integers past 2^53 exact, as BigInts', async () => {
    const s = await stub([{ text: '{"data":[{"username":"a","id":12345678901234567891,"n":1}],"page":1,"next_page":null,"previous_page":null,"page_items":1,"current_credits":5}' }]);
    const [record] = await createClient({ baseUrl: s.url, apiKey: 'k' }).graph.followers('jack').toArray({ limit: 1 });
    expect(record!.id).toBe(12345678901234567891n);
    expect(record!.n).toBe(1);
  });

  it('throws SgqError with the exit code, kind and details', async () => {
    const failure = async (run: (sgq: SgqClient) => Promise<unknown>, key = DEMO_KEY) => {
      try {
        await run(client({ apiKey: key }));
      } catch (error) {
        return error as SgqError;
      }
      throw new Error('no error');
    };
    const noData = await failure((sgq) => sgq.graph.followers('nobody').toArray({ maxPages: 1 }));
    expect(noData).toBeInstanceOf(SgqError);
    expect(noData).toMatchObject({ exitCode: 4, kind: 'service', details: { records: ['no data for username = nobody'], status: 200, page: 1 } });
    const expired = await failure((sgq) => sgq.graph.followers('jack').toArray({ maxPages: 1 }), EXPIRED_KEY);
    expect(expired).toMatchObject({ exitCode: 5, kind: 'expired', details: { status: 429, body: { Error: 'Subscription expired and credit value exceeded' } } });
    const placeholder = await failure((sgq) => sgq.lists.members('123').toArray({ maxPages: 1 }));
    expect(placeholder).toMatchObject({ exitCode: 6, kind: 'unavailable' });
    const rejected = await failure((sgq) => sgq.graph.followers('jack').toArray({ maxPages: 1 }), 'wrong-key');
    expect(rejected).toMatchObject({ exitCode: 3, kind: 'config', details: { status: 401 } });
    const refused = await failure(() => createClient({ baseUrl: 'http://127.0.0.1:9', retries: 0 }).info());
    expect(refused).toMatchObject({ exitCode: 7, kind: 'network' });
  });

  it('stops with the signal: the abort reason is thrown, as fetch does', async () => {
    const controller = new AbortController();
    const seen: string[] = [];
    const run = (async () => {
      for await (const f of client().graph.followers('abort_100000', { signal: controller.signal })) {
        seen.push(f[sb.name()] as string);
        if (seen.length === 600) controller.abort(new Error('enough'));
      }
    })();
    await expect(run).rejects.toThrow('enough');
    expect(seen.length).toBeLessThan(1500);
  });

  /** The records a loop sees of a 1,200-follower user when `abortAt(n, controller)` may abort after the n-th, and what it throws. */
  async function loop(abortAt: (seen: number, controller: AbortController) => void, before?: (controller: AbortController) => void) {
    const controller = new AbortController();
    before?.(controller);
    let seen = 0;
    try {
      for await (const _ of client().graph.followers('abort_1200', { signal: controller.signal })) {
        seen++;
        abortAt(seen, controller);
      }
    } catch (error) {
      return { seen, thrown: error, reason: controller.signal.reason as unknown };
    }
    return { seen, thrown: undefined, reason: controller.signal.reason as unknown };
  }

  it('after abort() the loop gets no further record of the page: the next one throws the reason', async () => {
    const at10 = await loop((seen, c) => seen === 10 && c.abort(new Error('enough')));
    expect(at10.seen).toBe(10);
    expect(at10.thrown).toBe(at10.reason);
    // Between pages: the last record of the first page, then the reason, not the second page.
    const at500 = await loop((seen, c) => seen === 500 && c.abort(new Error('enough')));
    expect(at500.seen).toBe(500);
    expect(at500.thrown).toBe(at500.reason);
    // abort() with no reason throws the AbortError the signal holds, as fetch does.
    const plain = await loop((seen, c) => seen === 3 && c.abort());
    expect(plain.seen).toBe(3);
    expect(plain.thrown).toMatchObject({ name: 'AbortError' });
    expect(plain.thrown).toBe(plain.reason);
  });

  it('a signal aborted before the first record: no record, the reason thrown', async () => {
    const before = calls();
    const early = await loop(() => undefined, (c) => c.abort(new Error('not now')));
    expect(early.seen).toBe(0);
    expect(early.thrown).toBe(early.reason);
    expect(calls()).toBe(before);
  });

  it('.pages() after abort() between pages yields no further page, also one fetched ahead', async () => {
    const controller = new AbortController();
    const pages: (number | null)[] = [];
    const run = (async () => {
      for await (const page of client().graph.followers('abort_2000', { signal: controller.signal, parallel: 3 }).pages()) {
        pages.push(page.page);
        controller.abort(new Error('one is enough'));
      }
    })();
    const thrown = await run.then(() => undefined, (error: unknown) => error);
    expect(thrown).toBeInstanceOf(Error);
    expect(thrown).toBe(controller.signal.reason);
    expect(pages).toEqual([1]);
  });

  it('resolves omitted options from the environment, as the CLI does', async () => {
    const sgq = createClient({ env: { SGQ_BASE_URL: sb.sandbox.url, SGQ_API_KEY: DEMO_KEY, SGQ_CONFIG_DIR: tempDir() } });
    expect(await sgq.metadata.userid('jack').toArray({ all: true })).toEqual([expect.objectContaining({ username: 'jack' })]);
    expect(await sgq.info()).toBeTypeOf('object');
    // Nothing configured: a paid route needs a key (checked before anything is sent to the public address).
    await expect(createClient({ env: { SGQ_CONFIG_DIR: tempDir() } }).graph.followers('jack').toArray({ all: true })).rejects.toMatchObject({ kind: 'config' });
  });

  it('request() is a raw call like sgq api', async () => {
    const body = await client().request('/api/graph/get_followers', { user: 'raw_3', how: 'username', page: 1 });
    expect(body).toMatchObject({ user: 'raw_3', page: 1, next_page: null });
    expect(body.data).toHaveLength(3);
  });

  it('calls the routes without pages as the CLI does: one call, {user, how, page: 1}, the records as sent', async () => {
    const sgq = client();
    const before = sb.sandbox.calls.get('metadata/get_current_num_tweets') ?? 0;
    const records = sgq.metadata.currentTweets('jack');
    const [record, ...more] = await records.toArray({ all: true });
    expect(more).toEqual([]);
    expect(record).toMatchObject({ username: 'jack', num_tweets: expect.any(Number) });
    expect(typeof record!.userid).toBe('bigint');
    expect(records.result).toMatchObject({ stoppedBy: 'done', pages: 1, creditsUsed: 6 });
    expect(sb.sandbox.calls.get('metadata/get_current_num_tweets')).toBe(before + 1);
    const past = await sgq.metadata.pastUsernames('1234567890123456789', { how: 'userid' }).toArray({ all: true });
    expect(past.length).toBeGreaterThan(0);
    for (const p of past) expect(Object.keys(p)).toEqual(['username', 'last_checked']);
    await sgq.close();
  });

  it('runs against an in-process sandbox with sandbox: true', async () => {
    const sgq = createClient({ sandbox: true, env: {} });
    expect(await sgq.graph.following('box_7').toArray({ limit: 100 })).toHaveLength(7);
    await sgq.close();
  });

  it('loading it and creating a client read no file and start nothing', async () => {
    const lib = fileURLToPath(new URL('../../dist/lib/index.cjs', import.meta.url));
    const config = tempDir();
    const script = `
      const { createClient } = require(${JSON.stringify(lib)});
      createClient(); createClient({ sandbox: true });
      // Loading undici creates process.stderr (a PipeWrap here), which never holds Node open.
      const active = process.getActiveResourcesInfo().filter((r) => r !== 'PipeWrap' && r !== 'TTYWrap');
      console.log(JSON.stringify(active));`;
    const r = await execa(process.execPath, ['-e', script], { env: { SGQ_CONFIG_DIR: config } });
    expect(JSON.parse(r.stdout)).toEqual([]);
    expect(readdirSync(config)).toEqual([]);
  });
});


describe('the library: a trial limit', () => {
  const TRIAL_429 = { status: 429, body: { Error: 'API rate limit exceeded', Endpoint: '/graph/get_followers', 'Max Requests Per Hour': 10 } };

  it('throws kind quota (exit code 9) at once, with the limit and when the next request may go', async () => {
    const s = await stub(() => TRIAL_429);
    const sgq = createClient({ baseUrl: s.url, apiKey: 'k', env: { SGQ_CONFIG_DIR: tempDir() } });
    const error = await sgq.graph.followers('jack').toArray({ all: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SgqError);
    expect(error).toMatchObject({ kind: 'quota', exitCode: 9, details: { limit: 10, route: 'graph/get_followers', option: 'maxWait', fix: 'set-option' } });
    expect((error as SgqError).details.retryAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect((error as SgqError).message).toContain('the next request may go at');
    expect(s.requests).toHaveLength(1);
    await sgq.close();
  });

  it('waits for the hour when maxWait allows it', async () => {
    const s = await stub([TRIAL_429, { body: envelope(1, null, [{ follower_username: 'a' }]) }]);
    const sgq = createClient({ baseUrl: s.url, apiKey: 'k', maxWait: 10_000, env: { SGQ_CONFIG_DIR: tempDir(), SGQ_TRIAL_HOUR_MS: '500' } });
    expect(await sgq.graph.followers('jack').toArray({ all: true })).toHaveLength(1);
    expect(s.requests).toHaveLength(2);
    await sgq.close();
  });
});
