// `--notify URL` (setting notify) on --snapshot runs, against a receiver on loopback: a run
// with changes posts once, a run without changes posts nothing, a notification that fails is
// said on stderr (even with --quiet), changes no exit code, stays kept (0600) and is delivered
// by the next run, once; the body's text, content and changes, its bounds; and the address,
// a secret, masked wherever the key is.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ndjson, runSgq, serviceFolderIn, tempDir, type RunOptions } from '../helpers/run.js';
import { envelope, useStubs, type Reply } from '../helpers/stub-server.js';

const stubs = useStubs();
const PAGE = 500;
const SECRET = 'T0SECRET/B0SECRET/xoxbSECRETTOKEN42';

interface Body {
  text: string;
  content: string;
  command: string;
  changes: { user: string; route: string; counts: Record<string, number>; gained: Record<string, unknown>[]; lost: Record<string, unknown>[]; renamed: Record<string, unknown>[]; left_out: number }[];
  left_out: number;
  left_out_users: number;
}

/** A followers route serving each user's list (`name` or `name:id`). */
async function service(lists: Record<string, string[]>) {
  return stubs((req) => {
    const { user, page } = JSON.parse(req.body) as { user: string; page: number };
    const all = (lists[user] ?? []).map((entry) => {
      const [username, id] = entry.split(':');
      return { username, userid: Number(id ?? 1000 + [...username!].reduce((n, c) => n * 31 + c.charCodeAt(0), 7) % 100000), last_checked: '2026-11-01T00:00:00.000000+00:00' };
    });
    return { body: envelope(page, page * PAGE < all.length ? page + 1 : null, all.slice((page - 1) * PAGE, page * PAGE), 1000, user) };
  });
}

/** A receiver that records every POST and answers as `reply` says (200 by default). */
async function receiver(reply: (n: number) => Reply = () => ({ body: { ok: true } })) {
  return stubs((_req, n) => reply(n));
}

/** An address where nothing listens: a refused connection. */
async function closedAddress(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

async function setup(lists: Record<string, string[]>) {
  const stub = await service(lists);
  const data = tempDir('sgq-data-');
  const config = tempDir();
  const run = (argv: string[], options: RunOptions = {}) =>
    runSgq(argv, { ...options, env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k', XDG_DATA_HOME: data, SGQ_CONFIG_DIR: config, SGQ_RETRIES: '0', ...options.env } });
  const outbox = () => join(serviceFolderIn(join(data, 'sgq', 'snapshots')), 'default', '.notify');
  const kept = () => {
    try {
      return readdirSync(outbox()).filter((n) => n.endsWith('.json'));
    } catch {
      return [];
    }
  };
  return { run, config, kept, outbox };
}

const night = (d: number) => () => new Date(Date.UTC(2026, 10, d, 3, 15));
const snapshotRun = (users: string[], notify: string, ...extra: string[]) => ['graph', 'followers', ...users, '--all', '--snapshot', '--notify', notify, ...extra];
const bodies = (r: { requests: { body: string }[] }) => r.requests.map((q) => JSON.parse(q.body) as Body);

describe('--notify', () => {
  it('a run with changes posts once (text, content, the changes); a run without changes posts nothing; the first snapshot has none', async () => {
    const lists = { jack: ['amy', 'bob', 'cat'], jill: ['dan'] };
    const s = await setup(lists);
    const to = await receiver();
    const url = `${to.url}/services/${SECRET}`;
    expect((await s.run(snapshotRun(['jack', 'jill'], url), { now: night(1) })).code).toBe(0);
    expect(to.requests).toHaveLength(0);

    lists.jack = ['amy', 'cat', 'eve', 'fay'];
    lists.jill = ['dan', 'gus'];
    const second = await s.run(snapshotRun(['jack', 'jill'], url), { now: night(2) });
    expect(second.code, second.stderr).toBe(0);
    // Without --changes the records are printed as ever; the changes go to the receiver.
    expect(ndjson(second.stdout)).toHaveLength(6);
    expect(to.requests).toHaveLength(1);
    expect(to.requests[0]!.method).toBe('POST');
    expect(to.requests[0]!.url).toBe(`/services/${SECRET}`);
    expect(to.requests[0]!.headers['content-type']).toBe('application/json');
    const [body] = bodies(to);
    expect(body!.text).toBe('sgq graph followers: jack 2 gained, 1 lost; jill 1 gained, 0 lost');
    expect(body!.content).toBe(body!.text);
    expect(body!.changes.map((c) => [c.user, c.route, c.counts])).toEqual([
      ['jack', 'graph/get_followers', { gained: 2, lost: 1, renamed: 0 }],
      ['jill', 'graph/get_followers', { gained: 1, lost: 0, renamed: 0 }],
    ]);
    expect(body!.changes[0]!.gained.map((a) => a.username)).toEqual(['eve', 'fay']);
    expect(body!.changes[0]!.lost).toEqual([{ username: 'bob', userid: expect.any(Number), last_checked: '2026-11-01T00:00:00.000000+00:00' }]);
    expect([body!.left_out, body!.left_out_users]).toEqual([0, 0]);
    expect(second.stderr).toContain(`sgq: notified ${to.url}/****EN42: sgq graph followers: jack 2 gained, 1 lost; jill 1 gained, 0 lost`);
    expect(s.kept()).toEqual([]);

    const third = await s.run(snapshotRun(['jack', 'jill'], url), { now: night(3) });
    expect(third.code).toBe(0);
    expect(to.requests).toHaveLength(1);
  });

  it('a refused notification: said on stderr even with --quiet, exit 0, kept 0600, delivered once by the next run (which has no changes of its own)', async () => {
    const lists = { jack: ['amy', 'bob'] };
    const s = await setup(lists);
    const nowhere = `${await closedAddress()}/hook/${SECRET}`;
    await s.run(snapshotRun(['jack'], nowhere), { now: night(1) });
    lists.jack = ['amy', 'cat'];
    const refused = await s.run([...snapshotRun(['jack'], nowhere), '--quiet', '--changes'], { now: night(2) });
    expect(refused.code).toBe(0);
    expect(said(refused.stdout).sort()).toEqual(['gained cat', 'lost bob']);
    expect(refused.stderr).toMatch(/^sgq: the notification of this run was not delivered: cannot reach http:\/\/127\.0\.0\.1:\d+\/\*\*\*\*EN42: connection refused; it is kept in .*\.notify and sent again by the next run with --notify\n$/);
    expect(refused.stderr).not.toContain('SECRET');
    const [file] = s.kept();
    expect(file).toBeDefined();
    expect(statSync(join(s.outbox(), file!)).mode & 0o777).toBe(0o600);
    // A part of the run's notification: the changes of the users its commit took.
    const part = JSON.parse(readFileSync(join(s.outbox(), file!), 'utf8')) as Pick<Body, 'command' | 'changes'>;
    expect([part.command, part.changes.map((c) => [c.user, c.counts])]).toEqual(['sgq graph followers', [['jack', { gained: 1, lost: 1, renamed: 0 }]]]);
    // The snapshot was kept all the same: the next night compares against it.
    const to = await receiver();
    const next = await s.run(snapshotRun(['jack'], `${to.url}/next`), { now: night(3) });
    expect(next.code).toBe(0);
    expect(bodies(to).map((b) => b.text)).toEqual(['sgq graph followers: jack 1 gained, 1 lost']);
    expect(next.stderr).toContain('a notification kept from an earlier run');
    expect(s.kept()).toEqual([]);
    await s.run(snapshotRun(['jack'], `${to.url}/next`), { now: night(4) });
    expect(to.requests).toHaveLength(1);
  });

  it('a 5xx after the retries, or no answer in time: kept, and sent again with the next run\'s own, the kept one first', async () => {
    const lists = { jack: ['amy'] };
    const s = await setup(lists);
    const failing = await receiver((n) => (n === 1 ? 'hang' : { status: 503, body: { error: 'down' } }));
    const url = `${failing.url}/${SECRET}`;
    await s.run(snapshotRun(['jack'], url), { now: night(1) });
    lists.jack = ['amy', 'bob'];
    const hung = await s.run([...snapshotRun(['jack'], url), '--timeout', '1'], { now: night(2) });
    expect(hung.code).toBe(0);
    expect(hung.stderr).toMatch(/the notification of this run was not delivered: no answer from http:\/\/127\.0\.0\.1:\d+\/\*\*\*\*EN42 within 1s/);
    lists.jack = ['amy', 'bob', 'cat'];
    const down = await s.run(snapshotRun(['jack'], url), { now: night(3), env: { SGQ_RETRIES: '1' } });
    expect(down.code).toBe(0);
    expect(down.stderr).toMatch(/a notification kept from an earlier run \(.*\) was not delivered either: http:\/\/127\.0\.0\.1:\d+\/\*\*\*\*EN42 answered HTTP 503: \{"error":"down"\} \(after 1 retry\)/);
    expect(down.stderr).toMatch(/the notification of this run was not delivered: .* answered HTTP 503/);
    // The kept one (once, then its retry), then its own (once, then its retry).
    expect(failing.requests).toHaveLength(1 + 2 + 2);
    expect(s.kept()).toHaveLength(2);
    const to = await receiver();
    lists.jack = ['bob', 'cat'];
    expect((await s.run(snapshotRun(['jack'], `${to.url}/ok`), { now: night(4) })).code).toBe(0);
    expect(bodies(to).map((b) => b.text)).toEqual(['sgq graph followers: jack 1 gained, 0 lost', 'sgq graph followers: jack 1 gained, 0 lost', 'sgq graph followers: jack 0 gained, 1 lost']);
    expect(s.kept()).toEqual([]);
  });

  it('goes through the proxy the environment names, by the rules of the client\'s calls (NO_PROXY too)', async () => {
    const lists = { jack: ['amy'] };
    const s = await setup(lists);
    const to = await receiver();
    const proxy = await closedAddress();
    const hook = to.url.replace('127.0.0.1', 'localhost');
    await s.run(snapshotRun(['jack'], hook), { now: night(1) });
    lists.jack = ['amy', 'bob'];
    // The service (127.0.0.1) is reached directly, the receiver (localhost) through the proxy, where nothing listens.
    const proxied = await s.run(snapshotRun(['jack'], hook), { now: night(2), env: { HTTP_PROXY: proxy, NO_PROXY: '127.0.0.1' } });
    expect(proxied.code).toBe(0);
    expect(proxied.stderr).toContain(`the notification of this run was not delivered: cannot reach the proxy ${proxy} (from HTTP_PROXY): connection refused`);
    expect(to.requests).toHaveLength(0);
    const direct = await s.run(snapshotRun(['jack'], hook), { now: night(3), env: { HTTP_PROXY: proxy, NO_PROXY: '127.0.0.1,localhost' } });
    expect(direct.code).toBe(0);
    expect(bodies(to).map((b) => b.text)).toEqual(['sgq graph followers: jack 1 gained, 0 lost']);
  });

  it('bounds the accounts listed, saying how many were left out; content stays within 2,000 characters', async () => {
    const many = Array.from({ length: 620 }, (_, i) => `acct${i}:${i + 10}`);
    const users = Array.from({ length: 120 }, (_, i) => `user_with_a_long_name_${i}`);
    const lists: Record<string, string[]> = Object.fromEntries(users.map((u) => [u, ['amy:1']]));
    lists.jack = ['amy:1'];
    const s = await setup(lists);
    const to = await receiver();
    await s.run(snapshotRun(['jack', ...users], to.url), { now: night(1) });
    lists.jack = ['amy:1', ...many];
    for (const u of users) lists[u] = ['amy:1', 'bob:2'];
    expect((await s.run(snapshotRun(['jack', ...users], to.url, '--concurrency', '8'), { now: night(2) })).code).toBe(0);
    const [body] = bodies(to);
    expect(body!.changes).toHaveLength(121);
    const listed = body!.changes.reduce((n, c) => n + c.gained.length, 0);
    expect(listed).toBe(500);
    expect(body!.left_out).toBe(620 + 120 - 500);
    expect(body!.changes.reduce((n, c) => n + c.counts.gained!, 0)).toBe(620 + 120);
    expect(body!.content.length).toBeLessThanOrEqual(2000);
    expect(body!.content).toMatch(/; and \d+ more users with changes$/);
    expect(body!.text.length).toBeGreaterThan(body!.content.length);
    expect(body!.text).not.toContain('\n');
  }, 60_000);
});

describe('the notify address is a secret', () => {
  it('config set notify reads stdin, never an argument; config list, -o json, --verbose and --trace mask it; describe says it is secret', async () => {
    const lists = { jack: ['amy'] };
    const s = await setup(lists);
    const to = await receiver();
    const url = `${to.url}/services/${SECRET}`;
    const argument = await s.run(['config', 'set', 'notify', url]);
    expect(argument.code).toBe(2);
    expect(argument.stderr).not.toContain('SECRET');
    expect(argument.stderr).toMatch(/a secret on the command line stays in shell history and shows in ps/);
    expect((await s.run(['config', 'set', 'notify'], { stdin: `${url}\n` })).code).toBe(0);
    expect((await s.run(['config', 'list'])).stdout).toContain(`notify=${to.url}/****EN42\n`);
    const json = JSON.parse((await s.run(['config', 'list', '-o', 'json'])).stdout) as { settings: { name: string; value: string; secret: boolean }[] };
    expect(json.settings.find((x) => x.name === 'notify')).toMatchObject({ value: `${to.url}/****EN42`, secret: true });
    expect((await s.run(['config', 'get', 'notify'])).stdout).toBe(`${to.url}/****EN42\n`);
    const described = JSON.parse((await s.run(['describe', '--json'])).stdout) as { settings: { name: string; secret: boolean; env: string }[] };
    expect(described.settings.find((x) => x.name === 'notify')).toMatchObject({ secret: true, env: 'SGQ_NOTIFY' });

    // The setting, with --verbose and --trace: the address never shows whole.
    await s.run(['graph', 'followers', 'jack', '--all', '--snapshot'], { now: night(1) });
    lists.jack = ['amy', 'bob'];
    const trace = join(tempDir(), 'trace.ndjson');
    const verbose = await s.run(['graph', 'followers', 'jack', '--all', '--snapshot', '--verbose', '--trace', trace], { now: night(2) });
    expect(verbose.code).toBe(0);
    expect(to.requests).toHaveLength(1);
    expect(verbose.stderr).toContain(`notify: POST`);
    expect(verbose.stderr).toContain(`${to.url}/****EN42`);
    expect(verbose.stderr).not.toContain('SECRET');
    const traced = readFileSync(trace, 'utf8');
    expect(traced).toContain(`"url":"${to.url}/****EN42"`);
    expect(traced).not.toContain('SECRET');

    // A bad address is one line that does not repeat it.
    const bad = await s.run(['graph', 'followers', 'jack', '--all', '--snapshot', '--notify', `ftp://x/${SECRET}`]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).not.toContain('SECRET');
    const alone = await s.run(['graph', 'followers', 'jack', '--notify', url]);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toMatch(/--notify needs --snapshot/);
    expect(alone.stderr).not.toContain('SECRET');
  });

  it('under --sandbox the profile\'s notify does not apply (synthetic churn never reaches the real channel); SGQ_NOTIFY and the flag do', async () => {
    const to = await receiver();
    const config = tempDir();
    const data = tempDir('sgq-data-');
    const env = { SGQ_CONFIG_DIR: config, XDG_DATA_HOME: data };
    await runSgq(['config', 'set', 'notify'], { stdin: `${to.url}/profile\n`, env });
    // The sandbox's lists without churn, then with it (other accounts altogether), then without: changes each time.
    const sandboxRun = (extra: Record<string, string> = {}) => runSgq(['--sandbox', 'graph', 'followers', 'jack', '--all', '--snapshot'], { env: { ...env, ...extra } });
    expect((await sandboxRun()).code).toBe(0);
    const churned = await sandboxRun({ SGQ_SANDBOX_CHURN: '0.2' });
    expect(churned.code).toBe(0);
    expect(to.requests).toHaveLength(0);
    expect((await sandboxRun({ SGQ_NOTIFY: `${to.url}/env` })).code).toBe(0);
    expect(to.requests.map((r) => r.url)).toEqual(['/env']);
  });
});

/** The changes printed, as `change name`. */
const said = (stdout: string) => ndjson(stdout).map((c) => `${c.change as string} ${c.username as string}`);
