import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ndjson, runSgq, tempDir, marksIn } from '../helpers/run.js';
import { useSandbox } from '../helpers/sandbox.js';
import { envelope, useStubs } from '../helpers/stub-server.js';

const sb = useSandbox();
const stubs = useStubs();

describe('batch input', () => {
  it('reads users from stdin with -, skipping blanks and comments, asking duplicates once', async () => {
    const stub = await stubs((req) => {
      const { user } = JSON.parse(req.body) as { user: string };
      return { body: { user, how: 'username', data: [{ user_id: `id-${user}` }] } };
    });
    const r = await runSgq(['metadata', 'userid', 'alice', '-', 'alice'], {
      env: { SGQ_BASE_URL: stub.url },
      stdin: '# accounts\nbob\n\n  carol  # the new one\nbob\nalice\n',
    });
    expect(r.code).toBe(0);
    expect(stub.bodies().map((b) => b.user).sort()).toEqual(['alice', 'bob', 'carol']);
    expect(ndjson(r.stdout).map((x) => x.query_user).sort()).toEqual(['alice', 'bob', 'carol']);
  });

  it('- with an empty stdin is a usage error', async () => {
    expect((await runSgq(['metadata', 'userid', '-'], { env: sb.env(), stdin: '\n# none\n' })).code).toBe(2);
  });

  it('tags each record with query_user in every format when there are several users', async () => {
    const j = JSON.parse((await runSgq(['metadata', 'userid', 'a1', 'b2', '-o', 'json'], { env: sb.env() })).stdout) as { query_user: string }[];
    expect(j.map((x) => x.query_user).sort()).toEqual(['a1', 'b2']);
    const csv = (await runSgq(['metadata', 'userid', 'a1', 'b2', '-o', 'csv'], { env: sb.env() })).stdout;
    expect(csv.split('\r\n')[0]).toBe('query_user,username,user_id');
    const table = (await runSgq(['metadata', 'userid', 'a1', 'b2', '-o', 'table'], { env: sb.env() })).stdout;
    expect(table).toContain('query_user');
    const single = ndjson((await runSgq(['metadata', 'userid', 'a1'], { env: sb.env() })).stdout);
    expect(single[0]).not.toHaveProperty('query_user');
    const named = ndjson((await runSgq(['metadata', 'userid', 'a1', '--fields', 'query_user,user_id'], { env: sb.env() })).stdout);
    expect(Object.keys(named[0]!)).toEqual(['query_user', 'user_id']);
  });

  it('runs users concurrently; pages of one user stay in order and lines never interleave', async () => {
    const users = Array.from({ length: 6 }, (_, i) => `u${i}_1500`);
    const r = await runSgq(['graph', 'followers', ...users, '--all', '--concurrency', '3'], { env: sb.env() });
    expect(r.code).toBe(0);
    const records = ndjson(r.stdout) as Record<string, string>[];
    expect(records).toHaveLength(9000);
    for (const user of users) {
      const mine = records.filter((x) => x.query_user === user).map((x) => Number(x[sb.name()]!.split('_').pop()));
      expect(mine).toEqual(Array.from({ length: 1500 }, (_, i) => i));
    }
  });

  it('--concurrency N keeps at most N users in flight', async () => {
    // Answers are held until N requests wait at once (or every user has asked), so a client
    // that keeps N in flight reaches N however slow the machine; one that sends more goes past it.
    const users = Array.from({ length: 12 }, (_, i) => `user${i}`);
    const held: (() => void)[] = [];
    let received = 0;
    let peak = 0;
    const { createServer } = await import('node:http');
    const gate = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        received++;
        held.push(() => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(envelope(1, null, [{ username: 'x' }]))));
        peak = Math.max(peak, held.length);
        if (held.length === 3 || received === users.length) {
          // One more turn of the event loop lets requests already sent arrive and be counted.
          setImmediate(() => {
            peak = Math.max(peak, held.length);
            for (const answer of held.splice(0)) answer();
          });
        }
      });
    });
    await new Promise<void>((r) => gate.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(gate.address() as { port: number }).port}`;
    const r = await runSgq(['graph', 'followers', ...users, '--concurrency', '3'], { env: { SGQ_BASE_URL: url, SGQ_API_KEY: 'k' } });
    gate.close();
    expect(r.code).toBe(0);
    expect(received).toBe(12);
    expect(peak).toBe(3);
  });

  it('one user failing does not stop the others; the worst code wins (7 over 5 over 4)', async () => {
    const stub = await stubs((req) => {
      const { user } = JSON.parse(req.body) as { user: string };
      if (user === 'gone') return { body: envelope(1, null, [{ error: 'no data for username = gone' }]) };
      if (user === 'broke') return { status: 500, body: { message: 'boom' } };
      if (user === 'poor') return { status: 429, body: { Error: 'Subscription expired and credit value exceeded', Endpoint: '/graph/get_followers', 'Current credits': 0 } };
      return { body: envelope(1, null, [{ username: `${user}-fan` }]) };
    });
    const env = { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k' };
    const four = await runSgq(['graph', 'followers', 'ok1', 'gone', 'ok2', '--concurrency', '1'], { env });
    expect(four.code).toBe(4);
    expect(ndjson(four.stdout).map((x) => x.username)).toEqual(['ok1-fan', 'ok2-fan']);
    expect(four.stderr).toContain('gone: the service answered: no data for username = gone');
    const seven = await runSgq(['graph', 'followers', 'gone', 'broke', 'ok1', '--retries', '0', '--concurrency', '1'], { env });
    expect(seven.code).toBe(7);
    expect(seven.stderr).toContain('broke: the service answered HTTP 500');
    expect(ndjson(seven.stdout).map((x) => x.username)).toEqual(['ok1-fan']);
  });

  it('--max-credits is one budget for the whole run', async () => {
    // latest-tweets costs 6: a budget of 20 allows three users, not four.
    const r = await runSgq(['metadata', 'latest-tweets', 'a', 'b', 'c', 'd', '--max-credits', '20', '--concurrency', '2'], { env: sb.env() });
    expect(r.code).toBe(0);
    const users = new Set(ndjson(r.stdout).map((x) => x.query_user));
    expect(users.size).toBe(3);
  });

  it('--limit is one limit for the whole run', async () => {
    const r = await runSgq(['graph', 'followers', 'x_300', 'y_300', '--all', '--limit', '450', '--concurrency', '1'], { env: sb.env() });
    expect(ndjson(r.stdout)).toHaveLength(450);
  });
});

describe('run summary', () => {
  it('--summary json is one JSON object on stderr with per-user figures and totals', async () => {
    const r = await runSgq(['graph', 'followers', 'big_700', 'nobody', '--all', '--summary', 'json'], { env: sb.env() });
    expect(r.code).toBe(4);
    const summaryLine = r.stderr.trim().split('\n').pop()!;
    const summary = JSON.parse(summaryLine) as {
      users: { user: string; pages: number; records: number; credits_used: number; errors: string[]; exit_code: number }[];
      totals: { users: number; failed: number; pages: number; records: number; credits_used: number; credits_left: number };
      exit_code: number;
    };
    expect(summary.exit_code).toBe(4);
    const big = summary.users.find((u) => u.user === 'big_700')!;
    expect(big).toMatchObject({ pages: 2, records: 700, credits_used: 6, errors: [], exit_code: 0 });
    const nobody = summary.users.find((u) => u.user === 'nobody')!;
    expect(nobody.exit_code).toBe(4);
    expect(nobody.errors[0]).toContain('no data for username = nobody');
    expect(summary.totals).toMatchObject({ users: 2, failed: 1, pages: 2, records: 700, credits_used: 6 });
    expect(summary.totals.credits_left).toBeGreaterThan(0);
  });

  it('--summary json is the last line of stderr, after any note about --out', async () => {
    const dir = tempDir();
    const r = await runSgq(['graph', 'followers', 'x_30000', 'nobody', '--all', '--summary', 'json', '--out', join(dir, 'f.ndjson')], {
      env: { ...sb.env(), SGQ_API_KEY: 'sgq-low-key' },
    });
    expect(r.code).toBe(5);
    const stderr = r.stderr.trim().split('\n');
    expect(stderr.some((l) => l.includes('f.ndjson.partial'))).toBe(true);
    expect(JSON.parse(stderr[stderr.length - 1]!)).toHaveProperty('exit_code', 5);
  });

  it('--summary json is printed even with --quiet and in a pipe', async () => {
    const r = await runSgq(['metadata', 'userid', 'a', 'b', '--summary', 'json', '-q'], { env: sb.env() });
    expect(JSON.parse(r.stderr)).toHaveProperty('totals');
  });

  it('a terminal gets a line per user and the totals', async () => {
    const r = await runSgq(['metadata', 'userid', 'a', 'nobody'], { env: { ...sb.env(), NO_COLOR: '1' }, stderrIsTTY: true });
    expect(r.stderr).toMatch(/ {2}a: 1 page, 1 record, 0 credits, ok/);
    expect(r.stderr).toMatch(/ {2}nobody: 0 pages, 0 records, 0 credits, failed: /);
  });
});

describe('--since-last', () => {
  it('sends nothing the first time, then the start of the last complete run, per user', async () => {
    const stub = await stubs((req) => {
      const { user } = JSON.parse(req.body) as { user: string };
      if (user === 'flaky') return { status: 500, body: { message: 'down' } };
      return { body: envelope(1, null, [{ username: 'f' }]) };
    });
    const state = join(tempDir(), 'marks.json');
    const env = { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k' };
    const first = new Date('2026-11-20T03:15:00Z');
    const second = new Date('2026-11-21T03:15:00Z');
    const r1 = await runSgq(['graph', 'followers', 'jack', 'flaky', '--all', '--since-last', '--state', state, '--retries', '0', '--concurrency', '1'], { env, now: () => first });
    expect(r1.code).toBe(7);
    expect(stub.bodies().every((b) => b.since === undefined)).toBe(true);
    expect(marksIn(state)).toEqual({ 'default graph/get_followers username jack': '2026-11-20T03:15:00.000000+00:00' });

    stub.requests.length = 0;
    await runSgq(['graph', 'followers', 'jack', 'flaky', '--all', '--since-last', '--state', state, '--retries', '0', '--concurrency', '1'], { env, now: () => second });
    const bodies = stub.bodies();
    expect(bodies.find((b) => b.user === 'jack')!.since).toBe('2026-11-20T03:15:00.000000+00:00');
    expect(bodies.find((b) => b.user === 'flaky')!.since).toBeUndefined();
    expect(marksIn(state)['default graph/get_followers username jack']).toBe('2026-11-21T03:15:00.000000+00:00');
  });

  it('keeps marks apart per route and how, and does not move on a run stopped by --limit', async () => {
    let stub = await stubs(() => ({ body: envelope(1, 2, [{ username: 'f' }, { username: 'g' }]) }));
    const state = join(tempDir(), 'marks.json');
    const env = { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k' };
    await runSgq(['graph', 'followers', 'jack', '--all', '--limit', '1', '--since-last', '--state', state], { env });
    expect(() => readFileSync(state)).toThrow();
    stub = await stubs(() => ({ body: envelope(1, null, [{ username: 'f' }]) }));
    const env2 = { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k' };
    await runSgq(['graph', 'following', 'jack', '--all', '--since-last', '--state', state], { env: env2 });
    await runSgq(['graph', 'followers', '42', '--how', 'user_id', '--all', '--since-last', '--state', state], { env: env2 });
    expect(Object.keys(marksIn(state)).sort()).toEqual(['default graph/get_followers user_id 42', 'default graph/get_following username jack']);
  });

  it('--since and --since-last together are a usage error', async () => {
    expect((await runSgq(['graph', 'followers', 'jack', '--since', '1d', '--since-last'], { env: sb.env() })).code).toBe(2);
  });

  it('keeps the marks beside the config by default', async () => {
    const dir = tempDir();
    await runSgq(['graph', 'followers', 'big_10', '--since-last'], { env: { ...sb.env(), SGQ_CONFIG_DIR: dir } });
    expect(readFileSync(join(dir, 'since-marks.json'), 'utf8')).toContain('big_10');
  });
});
