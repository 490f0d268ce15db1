import { ownerFolder, serviceOf } from '../../src/core/service.js';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lines, ndjson, runSgq, tempDir } from '../helpers/run.js';
import { envelope, useStubs, type Recorded } from '../helpers/stub-server.js';

const stubs = useStubs();
const users = (n: number, stem = 'u') => Array.from({ length: n }, (_, i) => `${stem}${i}`);
const userOf = (req: Recorded) => (JSON.parse(req.body) as { user: string }).user;
const pageOf = (req: Recorded) => (JSON.parse(req.body) as { page: number }).page;

/** Every user has `pages` full pages of `size` records. */
const pagedStub = (size: number, pages: number) =>
  stubs((req) => {
    const page = pageOf(req);
    const data = Array.from({ length: size }, (_, i) => ({ username: `${userOf(req)}-${page}-${i}` }));
    return { body: envelope(page, page < pages ? page + 1 : null, data, 1000) };
  });

describe('one budget for the whole run, whatever the concurrency', () => {
  it('--limit 1 over 8 users sends one call', async () => {
    const stub = await pagedStub(500, 3);
    const r = await runSgq(['graph', 'followers', ...users(8), '--limit', '1', '--concurrency', '8'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k' } });
    expect(r.code).toBe(0);
    expect(lines(r.stdout)).toHaveLength(1);
    expect(stub.requests).toHaveLength(1);
  });

  it('latest-tweets over 4 users: --limit 1 and --max-credits 6 each send one call', async () => {
    // 6 credits a call; the free call that reads the balance first (under --max-credits) costs nothing.
    let balance = 100;
    const stub = await stubs((req) => ({ body: { data: [{ id: '1' }, { id: '2' }], current_credits: req.url.endsWith('/metadata/get_userid') ? balance : (balance -= 6) } }));
    const env = { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k' };
    const asked = () => stub.requests.filter((q) => q.url.endsWith('/metadata/get_latest_tweets')).length;
    const limited = await runSgq(['metadata', 'latest-tweets', 'a', 'b', 'c', 'd', '--limit', '1'], { env });
    expect(limited.code).toBe(0);
    expect(lines(limited.stdout)).toHaveLength(1);
    expect(asked()).toBe(1);

    const credits = await runSgq(['metadata', 'latest-tweets', 'a', 'b', 'c', 'd', '--max-credits', '6'], { env });
    expect(credits.code).toBe(0);
    expect(asked()).toBe(2);
    // The users never asked are named in a command that asks them, with a new budget.
    expect(credits.stderr).toContain('stopped before the next call could pass --max-credits 6 (6 credits spent, the next call costs 6 credits); 3 users not attempted; with a new budget, resume them with: sgq metadata latest-tweets b c d');
  });

  it('--limit over many users with --all cuts at most one call and sends none once met', async () => {
    const stub = await pagedStub(500, 3);
    const r = await runSgq(['graph', 'followers', ...users(6), '--all', '--limit', '1200', '--concurrency', '4'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k' } });
    expect(r.code).toBe(0);
    expect(lines(r.stdout)).toHaveLength(1200);
    // 500 + 500 + the 200 of a third page: any fourth call would bring records thrown away.
    expect(stub.requests).toHaveLength(3);
  });

  it('--max-credits over many users, at a price above the table (5, not 3), is never passed: one call at a time until the balances confirm the price', async () => {
    let balance = 1000;
    const stub = await stubs((req) => {
      if (req.url.endsWith('/metadata/get_userid')) return { body: { data: [{ error: 'no data for username = jack' }], current_credits: balance } };
      balance -= 5;
      return { body: envelope(pageOf(req), null, [{ username: userOf(req) }], balance) };
    });
    const out = join(tempDir(), 'f.ndjson');
    const r = await runSgq(['graph', 'followers', ...users(20), '--max-credits', '20', '--concurrency', '8', '--summary', 'json', '--out', out], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k' } });
    expect(r.code).toBe(0);
    // The balance is read first (free): the first call measures 5, the second confirms it: 4 calls, 20 credits.
    expect(1000 - balance).toBe(20);
    expect(r.stderr).toContain('graph/get_followers cost 5 credits a call (the balance went from 995 to 990, one call at a time), not 3');
    const summary = JSON.parse(lines(r.stderr).at(-1)!) as { totals: { credits_used: number }; remaining: number };
    expect(summary.totals.credits_used).toBe(1000 - balance);
    expect(summary.remaining).toBe(20 - stub.requests.filter((q) => q.url.endsWith('/graph/get_followers')).length);
  });
});

describe('an unreachable service', () => {
  it('stops after 3 users fail in a row with one line, and saves the users left for a resume', async () => {
    const stub = await stubs(() => ({ status: 503, body: { message: 'down' } }));
    const out = join(tempDir(), 'followers.ndjson');
    const list = users(30);
    const r = await runSgq(['graph', 'followers', '-', '--retries', '0', '--concurrency', '1', '--out', out, '--summary', 'json'], {
      env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k' },
      stdin: `${list.join('\n')}\n`,
    });
    expect(r.code).toBe(7);
    expect(stub.requests).toHaveLength(3);
    const messages = lines(r.stderr).slice(0, -1);
    expect(messages.filter((l) => l.includes('unreachable'))).toEqual([
      `sgq: the service is unreachable: stopped after 3 users failed in a row; 3 users failed, 27 were not attempted; their list is in ${out}.remaining; resume them with: sgq graph followers - --concurrency 1 -o ndjson --summary json --retries 0 < ${out}.remaining >> ${out}.partial`,
    ]);
    // The 3 users' own failures, that line, and the note naming FILE.partial: not a line per user.
    expect(messages).toHaveLength(5);
    // The 3 that failed and the 27 never asked, in their order.
    expect(lines(readFileSync(`${out}.remaining`, 'utf8'))).toEqual(list);
    const summary = JSON.parse(lines(r.stderr).at(-1)!) as { remaining: number; resume: string; totals: { users: number; failed: number } };
    expect(summary.remaining).toBe(30);
    expect(summary.totals).toMatchObject({ users: 3, failed: 3 });
  });

  it('without --out, keeps the users left beside the config, never in the current folder', async () => {
    const stub = await stubs(() => 'reset');
    const config = tempDir();
    const here = process.cwd();
    const before = readdirSync(here);
    const list = users(20);
    const r = await runSgq(['graph', 'followers', '-', '--retries', '0', '--concurrency', '1'], {
      env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k', SGQ_CONFIG_DIR: config },
      stdin: `${list.join('\n')}\n`,
    });
    expect(r.code).toBe(7);
    // Kept per service and profile (src/core/service.ts), so a --sandbox run never replaces it.
    const file = join(ownerFolder(join(config, 'remaining'), { service: serviceOf(stub.url), profile: 'default' }), 'graph-followers.txt');
    expect(lines(r.stderr).find((l) => l.includes('unreachable'))).toContain(`< ${file}`);
    expect(lines(readFileSync(file, 'utf8'))).toEqual(list);
    expect(readdirSync(here)).toEqual(before);
  });

  it('with users in flight, starts none once the service is taken to be down', async () => {
    const stub = await stubs(() => 'reset');
    const out = join(tempDir(), 'f.ndjson');
    const r = await runSgq(['graph', 'followers', ...users(40), '--retries', '0', '--concurrency', '4', '--out', out], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k' } });
    expect(r.code).toBe(7);
    // Three failures, and at most one more user in flight on each of the three other workers.
    expect(stub.requests.length).toBeLessThanOrEqual(6);
    expect(lines(r.stderr).filter((l) => l.includes('unreachable'))).toHaveLength(1);
    // Every user is either counted as asked or saved for the resume, none twice.
    const saved = lines(readFileSync(`${out}.remaining`, 'utf8'));
    expect(new Set(saved).size).toBe(saved.length);
    expect(saved.length).toBeGreaterThanOrEqual(40 - stub.requests.length);
  });

  it('one user that answers between failures keeps the run going', async () => {
    const stub = await stubs((req) => (userOf(req).startsWith('ok') ? { body: envelope(1, null, [{ username: 'x' }]) } : { status: 503, body: {} }));
    const list = ['a', 'b', 'ok1', 'c', 'd', 'ok2', 'e'];
    const r = await runSgq(['graph', 'followers', ...list, '--retries', '0', '--concurrency', '1'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k' } });
    expect(r.code).toBe(7);
    expect(stub.requests).toHaveLength(7);
    expect(r.stderr).not.toContain('unreachable');
    // The users that failed are named in one command that asks them again.
    expect(r.stderr).toContain('sgq: 5 users not finished; resume with: sgq graph followers a b c d e --concurrency 1 --retries 0\n');
  });
  it('counts as not attempted only the users never asked; the resume asks the failed ones too', async () => {
    const stub = await stubs((req) => (userOf(req).startsWith('ok') ? { body: envelope(1, null, [{ username: 'x' }]) } : { status: 503, body: {} }));
    const list = ['a', 'b', 'ok1', 'c', 'd', 'e', 'f', 'g'];
    const r = await runSgq(['graph', 'followers', ...list, '--retries', '0', '--concurrency', '1'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k' } });
    expect(r.code).toBe(7);
    expect(stub.requests).toHaveLength(6);
    expect(r.stderr).toContain(
      'sgq: the service is unreachable: stopped after 3 users failed in a row; 5 users failed, 2 were not attempted; resume them with: sgq graph followers a b c d e f g --concurrency 1 --retries 0\n',
    );
  });
});

describe('an outage with users in flight (issue 34)', () => {
  it('tells the users whose requests failed from those never tried, and leaves both for the resume', async () => {
    // The first four users reach the service before any answer: three connections are then
    // dropped, and the fourth never answered, as a service going down does.
    let release: () => void = () => undefined;
    const arrived = new Promise<void>((resolve) => (release = resolve));
    const stub = await stubs(async (req, n) => {
      if (n >= 4) release();
      if (n > 3) return 'hang';
      await arrived;
      return 'reset';
    });
    const out = join(tempDir(), 'f.ndjson');
    const list = users(40);
    // A time limit past the test's own: a request left waiting once the run stopped would fail the test.
    const r = await runSgq(['graph', 'followers', ...list, '--retries', '0', '--timeout', '300', '--concurrency', '4', '--out', out, '--summary', 'json'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k' } });
    expect(r.code).toBe(7);
    const line = lines(r.stderr).find((l) => l.includes('unreachable'))!;
    const [, failed, notTried] = /stopped after 3 users failed in a row; (\d+) users failed, (\d+) were not attempted; their list is in /.exec(line)!.map(Number);
    // Every user the service heard of failed; the others were never tried.
    expect(failed).toBeGreaterThanOrEqual(new Set(stub.requests.map(userOf)).size);
    expect(failed).toBeGreaterThanOrEqual(4);
    expect(failed! + notTried!).toBe(40);
    expect(lines(readFileSync(`${out}.remaining`, 'utf8')).sort()).toEqual([...list].sort());
    expect((JSON.parse(lines(r.stderr).at(-1)!) as { remaining: number }).remaining).toBe(40);
  });
});

describe('resume commands', () => {
  it('carry what is left of --limit and --max-credits, --raw, and -- before users that start with -', async () => {
    // Records differ from page to page: a page that repeats the one before ends the run.
    const stub = await stubs((req) => (pageOf(req) === 3 ? { status: 500, body: {} } : { body: envelope(pageOf(req), pageOf(req) + 1, [{ username: `a${pageOf(req)}` }, { username: `b${pageOf(req)}` }], 100 - pageOf(req)) }));
    const env = { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k' };
    const r = await runSgq(['graph', 'followers', '--all', '--limit', '100', '--max-credits', '50', '--retries', '0', '--', '-dash'], { env });
    expect(r.code).toBe(7);
    // Page 2 measured 1 credit (99 → 98); page 1, with no balance before it, counts at the table's 3.
    expect(r.stderr).toContain('resume with: sgq graph followers --page 3 --all --limit 96 --max-credits 46 --retries 0 -- -dash\n');
    const raw = await runSgq(['graph', 'followers', 'x', '--all', '--raw', '--retries', '0'], { env });
    expect(raw.stderr).toContain('resume with: sgq graph followers x --page 3 --all --raw --retries 0\n');
  });

  it('after SIGINT, for the user stopped part-way and for the users never started', async () => {
    const controller = new AbortController();
    const stub = await stubs((req, n) => {
      if (n === 2) controller.abort('SIGINT');
      return { body: envelope(pageOf(req), pageOf(req) + 1, [{ username: `${userOf(req)}${pageOf(req)}` }]) };
    });
    const r = await runSgq(['graph', 'followers', 'a', 'b', 'c', '--all', '--concurrency', '1'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k' }, signal: controller.signal });
    expect(r.code).toBe(130);
    expect(ndjson(r.stdout).map((x) => x.username)).toEqual(['a1']);
    expect(r.stderr).toContain("a: stopped before page 2; resume with: printf '%s\\n' a | sgq graph followers - --page 2 --all\n");
    expect(r.stderr).toContain('sgq: 2 users not finished; resume with: sgq graph followers b c --all --concurrency 1\n');
  });
});

describe('the resume of a --snapshot run keeps what the run kept (issue 37)', () => {
  it('--snapshot --changes --confirm-lost --full-every --dataset: the resume repeats each; --notify on the command line is not repeated (its URL may hold a secret)', async () => {
    const stub = await stubs((req) => (userOf(req).startsWith('ok') ? { body: envelope(1, null, [{ id: '1', username: 'x' }]) } : { status: 503, body: {} }));
    const [store, dataset] = [tempDir('sgq-store-'), tempDir('sgq-dataset-')];
    const r = await runSgq(
      ['graph', 'followers', 'ok1', 'a', '--all', '--retries', '0', '--concurrency', '1', '--snapshot', '--changes', '--snapshot-dir', store, '--confirm-lost', '2', '--full-every', '3', '--dataset', dataset, '--notify', 'http://127.0.0.1:9/hook-secret'],
      { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k' } },
    );
    expect(r.code, r.stderr).toBe(7);
    const resume = /resume with: (.*)$/m.exec(r.stderr)?.[1];
    // One user of a run that tags its records (the dataset) is read from stdin.
    expect(resume).toBe(`printf '%s\\n' a | sgq graph followers - --all --snapshot --changes --snapshot-dir ${store} --confirm-lost 2 --full-every 3 --dataset ${dataset} --retries 0`);
    expect(r.stderr).not.toContain('hook-secret');
  });
});
