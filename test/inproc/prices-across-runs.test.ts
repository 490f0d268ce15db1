import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { envelope, useStubs, type Recorded, type Reply } from '../helpers/stub-server.js';
import { lines, runSgq, tempDir } from '../helpers/run.js';

// The balance note and the prices sgq learns belong to one service and one profile, and a
// price learned in a run is used by that run (issue 32).

const stubs = useStubs();

/**
 * An account on a service that charges `price` for a call with data (changeable), over
 * `pages(user)` pages of one record. A GET (sgq asking a loopback address whether it is its
 * sandbox) is answered as a service would, and metadata/get_userid is free, as the public table says.
 */
function account(price: number, { balance = 1000, pages = (_user: string): number => 20 }: { balance?: number; pages?: (user: string) => number } = {}) {
  const state = { balance, price, paid: 0 };
  const answer = (req: Recorded): Reply => {
    if (req.method !== 'POST') return { status: 404, body: { message: 'not found' } };
    const body = JSON.parse(req.body) as { user: string; page?: number };
    if (req.url.endsWith('/metadata/get_userid')) return { body: { data: [{ error: `no data for username = ${body.user}` }], current_credits: state.balance } };
    const page = body.page ?? 1;
    state.balance -= state.price;
    state.paid++;
    return { body: envelope(page, page < pages(body.user) ? page + 1 : null, [{ username: `${body.user}-${page}` }], state.balance, body.user) };
  };
  return { state, answer };
}

type Summary = { totals: { credits_used: number; credits_left: number | null } };
const summaryOf = (stderr: string) => JSON.parse(lines(stderr).at(-1)!) as Summary;
const envFor = (url: string, dir: string) => ({ SGQ_BASE_URL: url, SGQ_API_KEY: 'k', SGQ_CONFIG_DIR: dir });
const shown = async (env: Record<string, string>) => {
  const r = await runSgq(['credits', '--json'], { env });
  return r.code === 0 ? (JSON.parse(r.stdout) as { credits: number; prices?: Record<string, number> }) : r.code;
};

describe('a price learned in a run is used for the rest of it, within --max-credits', () => {
  it('a lower price: --max-credits 5 at 1 credit a call (the table says 3) makes five calls', async () => {
    const { state, answer } = account(1);
    const stub = await stubs(answer);
    const r = await runSgq(['graph', 'followers', 'jack', '--all', '--max-credits', '5', '--summary', 'json'], { env: envFor(stub.url, tempDir()) });
    expect(r.code).toBe(0);
    expect(state.paid).toBe(5);
    expect(lines(r.stdout)).toHaveLength(5);
    expect(r.stderr).toContain('graph/get_followers cost 1 credit a call');
    expect(r.stderr).toContain('sgq: stopped before the next call could pass --max-credits 5 (5 credits spent, the next call costs 1 credit)');
    expect(r.stderr).toContain('with a new budget, resume with: sgq graph followers jack --page 6 --all');
    expect(summaryOf(r.stderr).totals).toMatchObject({ credits_used: 5, credits_left: 995 });
    // The balance before the first call is read with the free call; a dry run says so, first.
    expect(stub.requests[0]!.url).toBe('/api/metadata/get_userid');
    const dry = await runSgq(['graph', 'followers', 'jack', '--all', '--max-credits', '5', '--dry-run'], { env: envFor(stub.url, tempDir()) });
    expect(lines(dry.stderr)[0]).toBe(`sgq: would send POST ${stub.url}/api/metadata/get_userid {"user":"jack","how":"username"} (x-api-key ****) first, free: the balance before the first call, so that --max-credits counts that call as the balances measure it`);
  });

  it('a higher price than an earlier run learned: the run stops before it would overspend (exit 0, said, with the resume)', async () => {
    const { state, answer } = account(1, { pages: (user) => (user === 'learn' ? 20 : 1) });
    const stub = await stubs(answer);
    const env = envFor(stub.url, tempDir());
    // An earlier run learns 1 credit a call; then the service charges 3.
    expect((await runSgq(['graph', 'followers', 'learn', '--all', '--max-pages', '4'], { env })).code).toBe(0);
    expect(await shown(env)).toMatchObject({ prices: { 'graph/get_followers': 1 } });
    state.price = 3;
    const before = state.balance;
    const r = await runSgq(['graph', 'followers', 'b', 'c', 'd', '--max-credits', '5'], { env });
    expect(r.code).toBe(0);
    expect(before - state.balance).toBeLessThanOrEqual(5);
    expect(r.stderr).toMatch(/sgq: stopped before the next call could pass --max-credits 5 \(3 credits spent, the next call costs 3 credits\); 2 users not attempted.*; with a new budget, resume them with: sgq graph followers c d/);
  });
});

describe('the balance and the prices of each service behind a profile', () => {
  it('two services behind one profile, and the sandbox, each keep their own note and prices', async () => {
    const a = account(4);
    const b = account(3, { balance: 5000 });
    const [sa, sb] = [await stubs(a.answer), await stubs(b.answer)];
    const dir = tempDir();
    expect((await runSgq(['graph', 'followers', 'jack', '--all', '--max-pages', '4'], { env: envFor(sa.url, dir) })).code).toBe(0);
    expect((await runSgq(['graph', 'followers', 'jack', '--limit', '1'], { env: envFor(sb.url, dir) })).code).toBe(0);
    expect((await runSgq(['--sandbox', 'graph', 'followers', 'jack', '--limit', '1'], { env: envFor(sb.url, dir) })).code).toBe(0);
    expect(await shown(envFor(sa.url, dir))).toMatchObject({ credits: a.state.balance, prices: { 'graph/get_followers': 4 } });
    const onB = await shown(envFor(sb.url, dir));
    expect(onB).toMatchObject({ credits: b.state.balance });
    expect((onB as { prices?: unknown }).prices).toBeUndefined();
    const sandbox = await runSgq(['--sandbox', 'credits', '--json'], { env: envFor(sa.url, dir) });
    expect(sandbox.code).toBe(0);
    expect(JSON.parse(sandbox.stdout)).toMatchObject({ service: 'sandbox' });
    expect([a.state.balance, b.state.balance]).not.toContain(JSON.parse(sandbox.stdout).credits);
    // The price learned on A is A's: B's dry run prices with the table.
    const dry = await runSgq(['graph', 'followers', 'jack', '--dry-run'], { env: envFor(sb.url, dir) });
    expect(dry.stderr).toContain("1 call × 3 credits; price: the service's public credit table");
  });

  it("a credits.json of sgq 3.x is the note of the service its base_url names, and nobody else's", async () => {
    const a = account(4);
    const b = account(3);
    const [sa, sb] = [await stubs(a.answer), await stubs(b.answer)];
    const dir = tempDir();
    const seen = '2026-11-01T00:00:00.000Z';
    writeFileSync(
      join(dir, 'credits.json'),
      JSON.stringify({
        profiles: { default: { credits: 777, seen_at: seen, route: 'graph/get_followers', base_url: `${sa.url}/api/` }, work: { credits: 5, seen_at: seen, route: 'info', base_url: sa.url } },
        prices: { default: { 'graph/get_followers': { credits: 4, seen_at: seen, base_url: sa.url }, 'metadata/get_tweets': { credits: 2, seen_at: seen, base_url: sb.url } } },
      }),
    );
    expect(await shown(envFor(sa.url, dir))).toMatchObject({ credits: 777, prices: { 'graph/get_followers': 4 } });
    expect((await runSgq(['credits'], { env: envFor(sb.url, dir) })).code).toBe(3);
    // Adopted without loss: a run on A keeps the price sgq 3.x learned there, and B's stays B's.
    expect((await runSgq(['graph', 'followers', 'jack', '--limit', '1'], { env: envFor(sa.url, dir) })).code).toBe(0);
    expect(await shown(envFor(sa.url, dir))).toMatchObject({ credits: a.state.balance, prices: { 'graph/get_followers': 4 } });
    expect((await runSgq(['metadata', 'tweets', 'jack', '--dry-run'], { env: envFor(sb.url, dir) })).stderr).toContain('price: observed on this profile');
  });

  it('--forget-prices forgets the prices learned on the profile and service, and says which', async () => {
    const a = account(4);
    const sa = await stubs(a.answer);
    const dir = tempDir();
    const env = envFor(sa.url, dir);
    expect((await runSgq(['graph', 'followers', 'jack', '--all', '--max-pages', '4'], { env })).code).toBe(0);
    expect(await shown(env)).toMatchObject({ prices: { 'graph/get_followers': 4 } });
    const forget = await runSgq(['credits', '--forget-prices'], { env });
    expect(forget.code).toBe(0);
    expect(forget.stdout).toBe('');
    expect(lines(forget.stderr)).toEqual([`sgq: forgot the price learned for graph/get_followers (4 credits a call) on profile default at ${sa.url}; the next runs use the public table or the prices setting until they learn it again`]);
    const after = await shown(env);
    expect(after).toMatchObject({ credits: a.state.balance });
    expect((after as { prices?: unknown }).prices).toBeUndefined();
    expect((await runSgq(['graph', 'followers', 'jack', '--dry-run'], { env })).stderr).toContain("1 call × 3 credits; price: the service's public credit table");
    const again = await runSgq(['credits', '--forget-prices'], { env });
    expect(again.code).toBe(0);
    expect(lines(again.stderr)).toEqual([`sgq: no learned prices to forget on profile default at ${sa.url}`]);
    const both = await runSgq(['credits', '--forget-prices', '--refresh'], { env });
    expect(both.code).toBe(2);
    expect(lines(both.stderr)).toHaveLength(1);
  });
});
