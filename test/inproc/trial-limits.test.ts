import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { DEMO_KEY, startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { lines, ndjson, runSgq, tempDir } from '../helpers/run.js';
import { envelope, useStubs, type Recorded, type Reply } from '../helpers/stub-server.js';
import { waitFor } from '../helpers/wait.js';

// Trial accounts (service-facts.md, "Rate limits"): a few calls per route an hour, then HTTP 429
// with {"Error": "API rate limit exceeded", "Endpoint": …, "Max Requests Per Hour": n} and no
// Retry-After. The hour is shortened for the tests that wait (SGQ_TRIAL_HOUR_MS); none waits an hour.

const stubs = useStubs();
const boxes: Sandbox[] = [];
afterEach(async () => {
  for (const box of boxes.splice(0)) await box.close();
});

const TRIAL_429: Reply = { status: 429, body: { Error: 'API rate limit exceeded', Endpoint: '/graph/get_followers', 'Max Requests Per Hour': 10 } };
const HOUR = 3_600_000;
const userOf = (req: Recorded) => (JSON.parse(req.body) as { user: string }).user;
const T0 = new Date('2026-11-28T12:00:00Z');
const at = (ms: number) => () => new Date(T0.getTime() + ms);

/** The time a quota line names as the earliest to go on. */
function nextRequestAt(line: string): number {
  const m = /the next request may go at (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)/.exec(line);
  if (!m) throw new Error(`no time in: ${line}`);
  return Date.parse(m[1]!);
}

describe('a trial limit (429 "API rate limit exceeded")', () => {
  it('stops the run at once with exit 9 and one line: the route, the limit, when to go on, the users left and the resume', async () => {
    const stub = await stubs(() => TRIAL_429);
    const before = Date.now();
    const r = await runSgq(['graph', 'followers', 'jack', 'dorsey', 'alice', '--concurrency', '1'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k' } });
    expect(r.code).toBe(9);
    expect(r.stdout).toBe('');
    // No quick retries against an hourly limit, and no other user asked once it is met.
    expect(stub.requests).toHaveLength(1);
    const all = lines(r.stderr);
    expect(all).toHaveLength(1);
    const line = all[0]!;
    expect(line).toContain('graph/get_followers');
    expect(line).toContain('10 requests an hour');
    expect(nextRequestAt(line)).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + HOUR);
    // Said to the second, rounded up: never earlier than an hour after the refusal.
    expect(nextRequestAt(line)).toBeLessThanOrEqual(Math.ceil((Date.now() + HOUR) / 1000) * 1000);
    expect(line).toContain('3 users not finished; resume them then with: sgq graph followers jack dorsey alice --concurrency 1');
  });

  it('with users in flight, asks each at most once and still ends with one line', async () => {
    const stub = await stubs(() => TRIAL_429);
    const r = await runSgq(['graph', 'followers', 'jack', 'dorsey', 'alice', 'bob', 'carol', '--all'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k' } });
    expect(r.code).toBe(9);
    const asked = stub.requests.map(userOf);
    expect(new Set(asked).size).toBe(asked.length);
    expect(asked.length).toBeLessThanOrEqual(4);
    expect(lines(r.stderr)).toHaveLength(1);
    // The users in flight come back in any order; the resume names each once.
    const resume = /5 users not finished; resume them then with: sgq graph followers (.*) --all$/.exec(lines(r.stderr)[0]!);
    expect(resume?.[1]?.split(' ').sort()).toEqual(['alice', 'bob', 'carol', 'dorsey', 'jack']);
  });

  it('--summary json names the time too, for a script that schedules the resume', async () => {
    const stub = await stubs(() => TRIAL_429);
    const r = await runSgq(['graph', 'followers', 'jack', 'dorsey', '--summary', 'json'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k' } });
    expect(r.code).toBe(9);
    const summary = JSON.parse(lines(r.stderr).at(-1)!) as { exit_code: number; next_request_at: string; remaining: number; resume: string };
    expect(summary).toMatchObject({ exit_code: 9, remaining: 2 });
    expect(summary.next_request_at).toBe(/at (\S+Z)/.exec(lines(r.stderr)[0]!)![1]);
    expect(summary.resume).toMatch(/^sgq graph followers (jack dorsey|dorsey jack) --summary json$/);
  });

  it('a user stopped part-way resumes from its page', async () => {
    const stub = await stubs([{ body: envelope(1, 2, [{ follower_username: 'a' }]) }, TRIAL_429]);
    const r = await runSgq(['graph', 'followers', 'jack', '--all'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k' } });
    expect(r.code).toBe(9);
    expect(ndjson(r.stdout)).toHaveLength(1);
    expect(r.stderr).toContain('jack: records before page 2 were written; resume with: sgq graph followers jack --page 2 --all');
    expect(r.stderr).toContain('10 requests an hour');
    expect(stub.requests).toHaveLength(2);
  });

  it('with --max-wait longer than the hour, waits for it, says so, and goes on', async () => {
    const stub = await stubs([TRIAL_429, { body: envelope(1, null, [{ follower_username: 'a' }]) }]);
    const r = await runSgq(['graph', 'followers', 'jack', '--max-wait', '10s'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k', SGQ_TRIAL_HOUR_MS: '1500' } });
    expect(r.code).toBe(0);
    expect(ndjson(r.stdout)).toHaveLength(1);
    expect(stub.requests).toHaveLength(2);
    expect(lines(r.stderr)).toHaveLength(1);
    expect(r.stderr).toContain('graph/get_followers allows 10 requests an hour');
    expect(r.stderr).toContain('waiting 2s for it, as --max-wait 10s allows');
  });

  it('with a --max-wait shorter than the hour, stops as without it', async () => {
    const stub = await stubs(() => TRIAL_429);
    const r = await runSgq(['graph', 'followers', 'jack', '--max-wait', '1s'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k', SGQ_TRIAL_HOUR_MS: '1500' } });
    expect(r.code).toBe(9);
    expect(stub.requests).toHaveLength(1);
  });

  it('exit 7 wins over 9, and 9 over 4', async () => {
    const answer = (req: Recorded): Reply => {
      const user = userOf(req);
      if (user === 'down') return { status: 503, body: { message: 'down' } };
      if (user === 'limited') return TRIAL_429;
      if (user === 'nobody') return { body: envelope(1, null, [{ error: 'no data for username = nobody' }]) };
      return { body: envelope(1, null, [{ follower_username: 'a' }]) };
    };
    const env = { SGQ_BASE_URL: (await stubs(answer)).url, SGQ_API_KEY: 'k' };
    const seven = await runSgq(['graph', 'followers', 'down', 'limited', 'jack', '--concurrency', '1', '--retries', '0'], { env });
    expect(seven.code).toBe(7);
    const nine = await runSgq(['graph', 'followers', 'nobody', 'limited', 'jack', '--concurrency', '1'], { env });
    expect(nine.code).toBe(9);
    // The user refused is left for the resume too.
    expect(nine.stderr).toContain('2 users not finished; resume them then with: sgq graph followers limited jack --concurrency 1');
  });
});

describe('the plan: pacing a trial account', () => {
  it('learns trial from a refusal, paces the next runs (their dry run says how long), and forgets it after an hour of more calls than the limit', async () => {
    const dir = tempDir();
    let refuse = true;
    let page = 0;
    const stub = await stubs(() => (refuse ? TRIAL_429 : { body: envelope(++page, page < 12 ? page + 1 : null, [{ follower_username: `u${page}` }]) }));
    const env = { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k', SGQ_CONFIG_DIR: dir };
    const first = await runSgq(['graph', 'followers', 'jack'], { env, now: at(0) });
    expect(first.code).toBe(9);

    // The refusal at T0 closes the route for an hour; then 10 calls an hour, as the service said.
    const dry = await runSgq(['graph', 'followers', 'a', 'b', 'c', '--all', '--max-pages', '5', '--dry-run'], { env, now: at(60_000) });
    expect(dry.code).toBe(0);
    expect(dry.stderr).toContain('plan trial (learned from the refusal at 2026-11-28T12:00:00Z)');
    expect(dry.stderr).toContain('10 requests an hour');
    expect(dry.stderr).toContain('these 15 calls take about 1 h 59 min');

    // Told the account is paid, a run two hours later makes 12 calls within the hour, none refused: trial is forgotten.
    refuse = false;
    const paid = await runSgq(['graph', 'followers', 'jack', '--all'], { env: { ...env, SGQ_PLAN: 'paid' }, now: at(2 * HOUR) });
    expect(paid.code).toBe(0);
    expect(ndjson(paid.stdout)).toHaveLength(12);
    expect(paid.stderr).toContain('graph/get_followers took 11 calls within an hour without a refusal: this profile is no longer taken for a trial account');
    const after = await runSgq(['graph', 'followers', 'a', '--all', '--max-pages', '5', '--dry-run'], { env, now: at(2 * HOUR + 60_000) });
    expect(after.stderr).not.toContain('plan trial');
  });

  it('the plan setting paces without any refusal, and the dry run says how long the run takes at that pace', async () => {
    const env = { SGQ_BASE_URL: 'https://api.example.com', SGQ_PLAN: 'trial', SGQ_RATE_LIMITS: 'graph/get_followers=10' };
    const r = await runSgq(['graph', 'followers', 'a', 'b', 'c', '--all', '--max-pages', '5', '--dry-run'], { env });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('plan trial (the plan setting): graph/get_followers is paced to 10 requests an hour (the rate-limits setting); these 15 calls take about 1 h');
    const unbounded = await runSgq(['graph', 'followers', 'a', '--all', '--dry-run'], { env });
    expect(unbounded.stderr).toContain('plan trial (the plan setting): graph/get_followers is paced to 10 requests an hour');
    const paid = await runSgq(['graph', 'followers', 'a', '--all', '--max-pages', '50', '--dry-run'], { env: { ...env, SGQ_PLAN: 'paid' } });
    expect(paid.stderr).not.toContain('paced');
  });

  it('paces within the limit instead of meeting it: no refusal from a sandbox acting as a trial account', async () => {
    const box = await startSandbox({ faults: { trialLimits: { 'graph/get_followers': 3 }, trialHourMs: 1500 } });
    boxes.push(box);
    const env = { SGQ_BASE_URL: box.url, SGQ_API_KEY: DEMO_KEY, SGQ_PLAN: 'trial', SGQ_RATE_LIMITS: 'graph/get_followers=3', SGQ_TRIAL_HOUR_MS: '1500' };
    const r = await runSgq(['graph', 'followers', 'a_600', 'b_600', '--all'], { env });
    expect(r.code).toBe(0);
    expect(ndjson(r.stdout)).toHaveLength(1200);
    expect(box.calls.get('graph/get_followers')).toBe(4);
    expect(box.refused.get('graph/get_followers') ?? 0).toBe(0);
  });

  it('Ctrl-C ends a wait for a slot at once, with the resume of the users left', async () => {
    const stub = await stubs(() => ({ body: envelope(1, null, [{ follower_username: 'a' }]) }));
    const controller = new AbortController();
    // An hour of ten minutes: a wait Ctrl-C did not end would outlast the test.
    const env = { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k', SGQ_PLAN: 'trial', SGQ_RATE_LIMITS: 'graph/get_followers=1', SGQ_TRIAL_HOUR_MS: '600000' };
    // Ctrl-C once jack's record is out: the stub seeing the call is not enough, as the answer
    // may still be on its way (then jack is left too, and named in the resume).
    const stdout = new PassThrough();
    let out = '';
    stdout.on('data', (c: Buffer) => (out += c.toString()));
    const run = runSgq(['graph', 'followers', 'jack', 'dorsey', '--concurrency', '1'], { env, signal: controller.signal, stdout });
    await waitFor(() => out.includes('"follower_username":"a"'), "jack's record on stdout");
    controller.abort('SIGINT');
    const r = await run;
    expect(r.code).toBe(130);
    expect(stub.requests).toHaveLength(1);
    expect(r.stderr).toContain("resume with: printf '%s\\n' dorsey | sgq graph followers -");
  });

  it('rejects a bad plan or rate-limits value with one line naming where it came from', async () => {
    const plan = await runSgq(['graph', 'followers', 'a', '--dry-run'], { env: { SGQ_BASE_URL: 'https://api.example.com', SGQ_PLAN: 'free' } });
    expect(plan.code).toBe(3);
    expect(lines(plan.stderr)).toEqual(['sgq: invalid plan "free" (from SGQ_PLAN); use trial or paid']);
    const limits = await runSgq(['config', 'set', 'rate-limits', 'graph/get_followers=x']);
    expect(limits.code).toBe(2);
    expect(limits.stderr).toContain('invalid rate-limits pair "graph/get_followers=x"');
  });
});

describe('the sandbox as a trial account', () => {
  it('answers the trial 429 past its limit, counting the hour per route', async () => {
    const box = await startSandbox({ faults: { trialLimits: { 'graph/get_followers': 2 } } });
    boxes.push(box);
    const env = { SGQ_BASE_URL: box.url, SGQ_API_KEY: DEMO_KEY };
    const r = await runSgq(['graph', 'followers', 'a', 'b', 'c', '--concurrency', '1'], { env });
    expect(r.code).toBe(9);
    expect(ndjson(r.stdout)).toHaveLength(lines(r.stdout).length);
    expect(r.stderr).toContain('graph/get_followers allows 2 requests an hour');
    expect(box.calls.get('graph/get_followers')).toBe(3);
    expect(box.refused.get('graph/get_followers')).toBe(1);
    // Another route keeps its own hour.
    const other = await runSgq(['graph', 'following', 'a'], { env });
    expect(other.code).toBe(0);
  });
});
