import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readBalance, readObservedPrices } from '../../src/cli/run/credits-store.js';
import { serviceOf } from '../../src/core/service.js';
import { DEMO_KEY } from '../../src/sandbox/server.js';
import { envelope, useStubs, type Recorded, type Reply } from '../helpers/stub-server.js';
import { lines, runSgq, tempDir } from '../helpers/run.js';
import { useSandbox } from '../helpers/sandbox.js';

const stubs = useStubs();
const sb = useSandbox();
const pageOf = (req: Recorded) => (JSON.parse(req.body) as { page?: number }).page ?? 1;

/**
 * A service that charges `price` a call with data, over `pages` pages of one record, reporting
 * the balance as `report` says (`n` counts the paid calls); metadata/get_userid is free.
 */
function charging(price: number, pages = 10, report: (balance: number, n: number) => number | undefined = (b) => b) {
  const state = { balance: 1000, paid: 0 };
  const answer = (req: Recorded): Reply => {
    if (req.url.endsWith('/metadata/get_userid')) return { body: { data: [{ error: 'no data for username = jack' }], current_credits: state.balance } };
    const n = ++state.paid;
    const page = pageOf(req);
    state.balance -= price;
    const body = envelope(page, page < pages ? page + 1 : null, [{ username: `u${page}` }]) as Record<string, unknown>;
    const shown = report(state.balance, n);
    if (shown === undefined) delete body.current_credits;
    else body.current_credits = shown;
    return { body };
  };
  return { state, answer };
}

type Summary = { totals: { credits_used: number; credits_left: number | null }; users: { credits_used: number }[] };
const summaryOf = (stderr: string) => JSON.parse(lines(stderr).at(-1)!) as Summary;
const envFor = (url: string, dir = tempDir()) => ({ SGQ_BASE_URL: url, SGQ_API_KEY: 'k', SGQ_CONFIG_DIR: dir });
/** What the note of the default profile holds for the service at `url`. */
const noteOf = (dir: string, url: string) => {
  const owner = { service: serviceOf(url), profile: 'default' };
  const config = join(dir, 'config.json');
  return { balance: readBalance(config, owner), prices: Object.fromEntries(readObservedPrices(config, owner)) };
};

describe('the public prices against the sandbox (it charges the route table)', () => {
  it('--max-credits 5 at 3 credits a call sends one call, says why it stopped and how to resume', async () => {
    const before = sb.sandbox.calls.get('graph/get_followers') ?? 0;
    const r = await runSgq(['graph', 'followers', 'big_1500', '--all', '--max-credits', '5', '--summary', 'json'], { env: sb.env() });
    expect(r.code).toBe(0);
    expect(sb.sandbox.calls.get('graph/get_followers')).toBe(before + 1);
    expect(lines(r.stdout)).toHaveLength(500);
    expect(r.stderr).toContain('sgq: big_1500: stopped before page 2; with a new budget, resume with: sgq graph followers big_1500 --page 2 --all --summary json\n');
    expect(r.stderr).toContain('sgq: stopped before the next call could pass --max-credits 5 (3 credits spent, the next call costs 3 credits)\n');
    expect(summaryOf(r.stderr).totals.credits_used).toBe(3);
  });

  it('a --max-credits below one call sends nothing and names the user to resume', async () => {
    const before = sb.sandbox.calls.get('metadata/get_metadata_history') ?? 0;
    const r = await runSgq(['metadata', 'history', 'jack', '--max-credits', '1'], { env: sb.env() });
    expect(r.code).toBe(0);
    expect(sb.sandbox.calls.get('metadata/get_metadata_history') ?? 0).toBe(before);
    expect(r.stderr).toContain('stopped before the next call could pass --max-credits 1 (0 credits spent, the next call costs 2 credits); 1 user not attempted; with a new budget, resume them with: sgq metadata history jack');
  });

  it('the summary counts what the balance fell by: 3 pages of followers are 9 credits', async () => {
    const r = await runSgq(['graph', 'followers', 'big_1500', '--all', '--summary', 'json'], { env: sb.env() });
    const { totals, users } = summaryOf(r.stderr);
    expect(totals.credits_used).toBe(9);
    expect(users[0]!.credits_used).toBe(9);
  });

  it('--dry-run bounds graph pages by --limit (500 a page) and every one-call route', async () => {
    const env = sb.env();
    const limit = await runSgq(['graph', 'following', 'jack', 'bob', '--all', '--limit', '1200', '--dry-run'], { env });
    expect(limit.stderr).toContain('2 users, at most 4 calls; worst case 12 credits (4 calls × 3 credits;');
    expect(limit.stderr).toContain('a page of graph/get_following holds up to 500, so the bound assumes every page but a user\'s last is full');
    const history = await runSgq(['metadata', 'history', 'jack', '--dry-run'], { env });
    expect(history.stderr).toContain("worst case 2 credits (1 call × 2 credits; price: the service's public credit table, read 2026-11-24)");
    const score = await runSgq(['alpha', 'score-history', 'jack', '--all', '--max-pages', '3', '--dry-run'], { env });
    expect(score.stderr).toContain("worst case 3 credits (3 calls × 1 credit; price: sgq's assumption, the public credit table gives none)");
    const tweets = await runSgq(['metadata', 'tweets', 'jack', '--all', '--limit', '50', '--dry-run'], { env });
    expect(tweets.stderr).toContain('the records a page of metadata/get_tweets holds are not published, so it bounds no call count');
    expect(tweets.stderr).toContain('worst case unknown: the number of pages is not known');
    const lists = await runSgq(['lists', 'members', '42', '--dry-run'], { env });
    expect(lists.stderr).toContain('worst case 1 credit (1 call × 1 credit; price: the service\'s public credit table, read 2026-11-24); nothing while the route is not open');
  });
});

describe('the prices setting', () => {
  it('SGQ_PRICES and the setting override the table in dry runs and budgets', async () => {
    const env = { ...sb.env(), SGQ_PRICES: 'graph/get_followers=5, metadata/get_tweets=2' };
    const dry = await runSgq(['graph', 'followers', 'jack', '--all', '--max-pages', '2', '--dry-run'], { env });
    expect(dry.stderr).toContain('worst case 10 credits (2 calls × 5 credits; price: the prices setting)');
    const dir = tempDir();
    const set = await runSgq(['config', 'set', 'prices', 'metadata/get_latest_tweets=10'], { env: { SGQ_CONFIG_DIR: dir } });
    expect(set.code).toBe(0);
    const latest = await runSgq(['metadata', 'latest-tweets', 'jack', '--dry-run'], { env: { SGQ_CONFIG_DIR: dir, SGQ_BASE_URL: sb.sandbox.url } });
    expect(latest.stderr).toContain('worst case 10 credits (1 call × 10 credits; price: the prices setting)');
  });

  it('a bad pair is one line naming it: exit 3 from the environment, exit 2 at config set; nothing is sent', async () => {
    const stub = await stubs(() => ({ body: envelope(1, null, []) }));
    const bad = await runSgq(['graph', 'followers', 'jack'], { env: { ...envFor(stub.url), SGQ_PRICES: 'graph/get_followers=5,graph/get_follower=4' } });
    expect(bad.code).toBe(3);
    expect(lines(bad.stderr)).toHaveLength(1);
    expect(bad.stderr).toContain('invalid prices pair "graph/get_follower=4": no route graph/get_follower');
    expect(bad.stderr).toContain('(from SGQ_PRICES)');
    expect(stub.requests).toHaveLength(0);
    const set = await runSgq(['config', 'set', 'prices', 'graph/get_followers=three'], { env: { SGQ_CONFIG_DIR: tempDir() } });
    expect(set.code).toBe(2);
    expect(lines(set.stderr)).toHaveLength(1);
    expect(set.stderr).toContain('invalid prices pair "graph/get_followers=three"');
  });
});

describe('prices observed from the balances', () => {
  it('a price above the table is said once, kept beside the balance, and used by the next runs', async () => {
    const { answer } = charging(4);
    const stub = await stubs(answer);
    const dir = tempDir();
    const env = envFor(stub.url, dir);
    const first = await runSgq(['graph', 'followers', 'jack', '--all', '--max-pages', '4', '--summary', 'json'], { env });
    expect(first.code).toBe(0);
    const said = lines(first.stderr).filter((l) => l.includes('cost 4 credits a call'));
    expect(said).toEqual(["sgq: graph/get_followers cost 4 credits a call (the balance went from 992 to 988, one call at a time), not 3 (price: the service's public credit table, read 2026-11-24); sgq uses 4 from now on for this profile"]);
    expect(summaryOf(first.stderr).totals).toMatchObject({ credits_used: 16, credits_left: 984 });
    const stored = noteOf(dir, stub.url);
    expect(stored.prices).toEqual({ 'graph/get_followers': 4 });
    expect(stored.balance).toMatchObject({ credits: 984, base_url: stub.url });
    const shown = await runSgq(['credits', '--json'], { env });
    expect(JSON.parse(shown.stdout)).toMatchObject({ credits: 984, prices: { 'graph/get_followers': 4 } });
    expect((await runSgq(['credits', '-v'], { env })).stderr).toContain('observed price: graph/get_followers 4 credits a call');

    // Said once: the next run knows the price and says nothing of it.
    const second = await runSgq(['graph', 'followers', 'bob', '--all', '--max-pages', '3'], { env });
    expect(second.stderr).not.toContain('a call (the balance went');
    const dry = await runSgq(['graph', 'followers', 'jack', '--all', '--max-pages', '2', '--dry-run'], { env });
    expect(dry.stderr).toContain('worst case 8 credits (2 calls × 4 credits; price: observed on this profile)');
    // The budget uses it: 3 credits pay for a call at the table's price, not for one at 4.
    const requestsBefore = stub.requests.length;
    const budget = await runSgq(['graph', 'followers', 'carol', '--all', '--max-credits', '3'], { env });
    expect(budget.code).toBe(0);
    expect(stub.requests.length).toBe(requestsBefore);
    expect(budget.stderr).toContain('stopped before the next call could pass --max-credits 3 (0 credits spent, the next call costs 4 credits); 1 user not attempted');
    // Another service behind the same profile does not use it.
    const other = await stubs(() => ({ body: envelope(1, null, [{ username: 'x' }]) }));
    const elsewhere = await runSgq(['graph', 'followers', 'jack', '--all', '--max-pages', '2', '--dry-run'], { env: { ...env, SGQ_BASE_URL: other.url } });
    expect(elsewhere.stderr).toContain('× 3 credits; price: the service');
  });

  it('the summary of one user is what the balances measured, not the calls times the price', async () => {
    // 2 credits a call where the table says 3; two calls: the second measured (2), the first at the price (3).
    const { answer } = charging(2, 2);
    const stub = await stubs(answer);
    const r = await runSgq(['graph', 'followers', 'jack', '--all', '--summary', 'json'], { env: envFor(stub.url) });
    const summary = summaryOf(r.stderr);
    expect(summary.totals).toMatchObject({ credits_used: 5, credits_left: 996 });
    expect(summary.users[0]!.credits_used).toBe(5);
  });

  it('the prices setting still wins over an observed price, and the run says so', async () => {
    const { answer } = charging(2);
    const stub = await stubs(answer);
    const r = await runSgq(['graph', 'followers', 'jack', '--all', '--max-pages', '3'], { env: { ...envFor(stub.url), SGQ_PRICES: 'graph/get_followers=5' } });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('graph/get_followers cost 2 credits a call (the balance went from 996 to 994, one call at a time), not the 5 of the prices setting, which still wins: change or unset it to use the observed price');
  });

  it('calls side by side (--parallel) measure nothing and keep no price', async () => {
    const { answer } = charging(4, 8);
    const stub = await stubs(answer);
    const dir = tempDir();
    const r = await runSgq(['graph', 'followers', 'jack', '--all', '--parallel', '4', '--summary', 'json'], { env: envFor(stub.url, dir) });
    expect(r.code).toBe(0);
    expect(r.stderr).not.toContain('a call (the balance went');
    expect(noteOf(dir, stub.url).prices).toEqual({});
  });

  it('a balance that goes up measures nothing, is traced with --verbose, and never makes the spend negative', async () => {
    // Credits are bought after the second call: the balance jumps by 500.
    const { answer } = charging(3, 4, (balance, n) => (n >= 3 ? balance + 500 : balance));
    const stub = await stubs(answer);
    const r = await runSgq(['graph', 'followers', 'jack', '--all', '-v', '--summary', 'json'], { env: envFor(stub.url) });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('sgq: the balance went up from 994 to 1,491 between two calls (credits bought during the run?): that call\'s price is not measured');
    expect(summaryOf(r.stderr).totals).toMatchObject({ credits_used: 12, credits_left: 1488 });
  });

  it('answers without current_credits: the spend is counted at the price, and no balance or price is kept', async () => {
    const { answer } = charging(3, 3, () => undefined);
    const stub = await stubs(answer);
    const dir = tempDir();
    const r = await runSgq(['graph', 'followers', 'jack', '--all', '--summary', 'json'], { env: envFor(stub.url, dir) });
    expect(r.code).toBe(0);
    expect(summaryOf(r.stderr).totals).toMatchObject({ credits_used: 9, credits_left: null });
    expect((await runSgq(['credits'], { env: envFor(stub.url, dir) })).code).toBe(3);
  });

  it('a damaged price in the credits.json of sgq 3.x is ignored', async () => {
    const dir = tempDir();
    const url = 'https://api.example.com';
    writeFileSync(join(dir, 'credits.json'), JSON.stringify({ profiles: {}, prices: { default: { 'graph/get_followers': { credits: -4, base_url: url }, 'metadata/get_tweets': 'x', 'metadata/get_metadata_history': { credits: 5, base_url: url } } } }));
    const r = await runSgq(['graph', 'followers', 'jack', '--dry-run'], { env: { ...envFor(url, dir) } });
    expect(r.stderr).toContain('× 3 credits; price: the service');
    // A sound one beside it is read.
    const history = await runSgq(['metadata', 'history', 'jack', '--dry-run'], { env: { ...envFor(url, dir) } });
    expect(history.stderr).toContain('× 5 credits; price: observed on this profile');
  });
});

describe('sgq credits --refresh reads the balance from whatever answer carries it', () => {
  it('an error record ("no data for username") carries it: no account needs to exist', async () => {
    const stub = await stubs(() => ({ body: { data: [{ error: 'no data for username = jack' }], current_credits: 4321 } }));
    const dir = tempDir();
    const r = await runSgq(['credits', '--refresh'], { env: envFor(stub.url, dir) });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('4321\n');
    expect(stub.requests[0]!.url).toBe('/api/metadata/get_userid');
    expect(stub.requests[0]!.headers['x-api-key']).toBe('k');
    expect((await runSgq(['credits'], { env: envFor(stub.url, dir) })).stdout).toBe('4321\n');
  });

  it('the subscription-expired 429 carries it as Current credits', async () => {
    const stub = await stubs(() => ({ status: 429, body: { Error: 'Subscription expired and credit value exceeded', Endpoint: '/metadata/get_userid', 'Current credits': 0 } }));
    const r = await runSgq(['credits', '--refresh'], { env: envFor(stub.url) });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('0\n');
  });

  it('an answer without it is one line, exit 4, and records nothing', async () => {
    const stub = await stubs(() => ({ body: { data: [{ error: 'no data for username = jack' }] } }));
    const dir = tempDir();
    const r = await runSgq(['credits', '--refresh'], { env: envFor(stub.url, dir) });
    expect(r.code).toBe(4);
    expect(lines(r.stderr)).toHaveLength(1);
    expect(r.stderr).toContain("the service's answer to metadata/get_userid carried no balance");
    expect((await runSgq(['credits'], { env: envFor(stub.url, dir) })).code).toBe(3);
  });

  it('against the sandbox, for an account that does not exist', async () => {
    const stub = await stubs(async (req) => {
      // Forward to the sandbox with a user it does not know: it answers with an error record.
      const res = await fetch(`${sb.sandbox.url}${req.url}`, { method: 'POST', headers: { 'x-api-key': DEMO_KEY, 'content-type': 'application/json' }, body: JSON.stringify({ user: 'nobody_here_404', how: 'username' }) });
      return { status: res.status, text: await res.text() };
    });
    const r = await runSgq(['credits', '--refresh'], { env: envFor(stub.url) });
    expect(r.code).toBe(0);
    expect(Number(r.stdout)).toBeGreaterThan(0);
  });
});

describe('--quiet and a learned price (issue 34)', () => {
  it('is not said under --quiet; --summary json and sgq credits carry it', async () => {
    const { answer } = charging(4);
    const stub = await stubs(answer);
    const dir = tempDir();
    const env = envFor(stub.url, dir);
    const quiet = await runSgq(['graph', 'followers', 'jack', '--all', '--max-pages', '4', '--quiet'], { env });
    expect(quiet.code).toBe(0);
    expect(quiet.stderr).toBe('');
    expect(noteOf(dir, stub.url).prices).toEqual({ 'graph/get_followers': 4 });

    const again = await runSgq(['graph', 'followers', 'jack', '--all', '--max-pages', '4', '--quiet', '--summary', 'json'], { env: envFor(stub.url) });
    expect(lines(again.stderr)).toHaveLength(1);
    expect((JSON.parse(again.stderr) as { prices?: unknown }).prices).toEqual({ 'graph/get_followers': 4 });
    expect(JSON.parse((await runSgq(['credits', '--json'], { env })).stdout)).toMatchObject({ prices: { 'graph/get_followers': 4 } });
  });
});
