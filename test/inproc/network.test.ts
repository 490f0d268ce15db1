import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEMO_KEY, startSandbox, type Faults, type Sandbox } from '../../src/sandbox/server.js';
import { lines, ndjson, runSgq, tempDir } from '../helpers/run.js';
import { CLOCK } from '../helpers/sandbox.js';
import { envelope, useStubs, type Reply } from '../helpers/stub-server.js';
import { connectProxy, httpsServer } from '../helpers/network.js';

const stubs = useStubs();
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function sandboxWith(faults: Faults): Promise<{ sandbox: Sandbox; env: Record<string, string> }> {
  const sandbox = await startSandbox({ clock: () => CLOCK, faults, ttlMs: 60_000 });
  cleanups.push(() => sandbox.close());
  return { sandbox, env: { SGQ_BASE_URL: sandbox.url, SGQ_API_KEY: DEMO_KEY } };
}

describe('connections and retries', () => {
  it('keeps connections alive across the pages of a run', async () => {
    const { sandbox, env } = await sandboxWith({});
    const r = await runSgq(['graph', 'followers', 'big_5000', '--all'], { env });
    expect(lines(r.stdout)).toHaveLength(5000);
    expect(sandbox.calls.get('graph/get_followers')).toBe(10);
    // undici's pool may open a second socket while the first is being released; never one per page.
    expect(sandbox.connections()).toBeLessThanOrEqual(2);
  });

  it('lets many users wait out their backoff at once without a listener-leak warning', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    cleanups.push(() => void process.off('warning', onWarning));
    const input = Array.from({ length: 20 }, (_, i) => `u${i}`).join('\n');
    const r = await runSgq(['metadata', 'userid', '-', '--concurrency', '16', '--retries', '1', '-q'], { env: { SGQ_BASE_URL: 'http://127.0.0.1:9' }, stdin: input });
    expect(r.code).toBe(7);
    // A warning is emitted on the next turn at the latest.
    await new Promise((resolve) => setImmediate(resolve));
    expect(warnings).not.toContain('MaxListenersExceededWarning');
  });

  it('retries 503 with backoff and says so in --verbose', async () => {
    const { env } = await sandboxWith({ failFirst: 2 });
    const r = await runSgq(['graph', 'followers', 'big_10', '-v'], { env });
    expect(r.code).toBe(0);
    expect(lines(r.stdout)).toHaveLength(10);
    expect(r.stderr).toMatch(/retry 1\/3 of graph\/get_followers in \d+ ms: the service answered HTTP 503/);
    expect(r.stderr).toMatch(/retry 2\/3/);
  });

  it('honours Retry-After on a 429 that is not the subscription error', async () => {
    const { env } = await sandboxWith({ failFirst: 1, failStatus: 429, retryAfter: 1 });
    const r = await runSgq(['graph', 'followers', 'big_10', '-v'], { env });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('in 1000 ms: the service answered HTTP 429');
  });

  it('gives up at once when Retry-After is longer than sgq waits', async () => {
    const stub = await stubs([{ status: 429, body: { message: 'later' }, headers: { 'retry-after': '3600' } }]);
    const r = await runSgq(['graph', 'followers', 'x'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k' } });
    expect(r.code).toBe(7);
    expect(r.stderr).toContain('asks to wait 3600s');
    expect(stub.requests).toHaveLength(1);
  });

  it('retries a reset connection', async () => {
    const stub = await stubs(['reset', { body: envelope(1, null, [{ username: 'a' }]) }]);
    const r = await runSgq(['graph', 'followers', 'x', '-v'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k' } });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/retry 1\/3 .*(reset|closed)/);
    expect(stub.requests).toHaveLength(2);
  });

  it.each([
    ['401', { status: 401, body: { message: 'bad key' } }, 3],
    ['400', { status: 400, body: { message: 'bad request' } }, 4],
    ['error records on a 500', { status: 500, body: { data: [{ error: 'no data for username = x' }] } }, 4],
    ['subscription expired', { status: 429, body: { Error: 'Subscription expired and credit value exceeded', Endpoint: '/graph/get_followers', 'Current credits': 0 } }, 5],
  ])('never retries %s', async (_name, reply, code) => {
    const stub = await stubs([reply, reply]);
    const r = await runSgq(['graph', 'followers', 'x'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k' } });
    expect(r.code).toBe(code);
    expect(stub.requests).toHaveLength(1);
  });

  it('--timeout covers a server that never answers, then retries, then exits 7', async () => {
    const { sandbox, env } = await sandboxWith({ hangRate: 1 });
    const r = await runSgq(['graph', 'followers', 'jack', '--timeout', '0.3', '--retries', '1', '-v'], { env });
    expect(r.code).toBe(7);
    expect(r.stderr).toContain('no complete answer');
    expect(r.stderr).toContain('within 0.3s');
    expect(sandbox.calls.get('graph/get_followers')).toBe(2);
  });

  it('never shows the API key, whatever goes wrong', async () => {
    const key = 'super-secret-key-0123456789';
    const stub = await stubs([{ status: 503, text: 'x' }, { status: 401, body: { message: 'nope' } }]);
    const r = await runSgq(['graph', 'followers', 'x', '-v'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: key } });
    expect(r.code).toBe(3);
    expect(r.stdout + r.stderr).not.toContain(key);
    expect(r.stderr).toContain('****6789');
  });
});

describe('partial failure and resume', () => {
  it('keeps the pages before a failed page, names it and prints the resume command (exit 7)', async () => {
    const { env } = await sandboxWith({ failPage: 3 });
    const r = await runSgq(['graph', 'followers', 'big_2200', '--all', '--since', '2020-01-01', '--retries', '1'], { env });
    expect(r.code).toBe(7);
    expect(lines(r.stdout)).toHaveLength(1000);
    expect(r.stderr).toContain('big_2200: page 3 failed: the service answered HTTP 500');
    expect(r.stderr).toContain('resume with: sgq graph followers big_2200 --since 2020-01-01T00:00:00.000000+00:00 --page 3 --all');

    // The printed command fetches exactly the rest.
    const healthy = await sandboxWith({});
    const rest = await runSgq(['graph', 'followers', 'big_2200', '--since', '2020-01-01T00:00:00.000000+00:00', '--page', '3', '--all'], { env: healthy.env });
    const full = await runSgq(['graph', 'followers', 'big_2200', '--all'], { env: healthy.env });
    expect(r.stdout + rest.stdout).toBe(full.stdout);
  });

  it('with --out, keeps the old file and saves the fetched pages as FILE.partial', async () => {
    const { env } = await sandboxWith({ failPage: 2 });
    const file = join(tempDir(), 'f.ndjson');
    writeFileSync(file, 'yesterday\n');
    const r = await runSgq(['graph', 'followers', 'big_1200', '--all', '--out', file, '--retries', '0'], { env });
    expect(r.code).toBe(7);
    expect(readFileSync(file, 'utf8')).toBe('yesterday\n');
    expect(lines(readFileSync(`${file}.partial`, 'utf8'))).toHaveLength(500);
    expect(r.stderr).toContain(`${file}.partial`);
  });
});

describe('bad bodies from the server', () => {
  it.each([
    ['html', 'HTML page'],
    ['truncated', 'not valid JSON'],
    ['text', 'not valid JSON'],
    ['data-object', 'data is not a list'],
    ['bad-page', 'next_page is "two"'],
    ['huge', 'larger than 64 MiB'],
  ] as const)('%s is a clear exit 7', async (kind, words) => {
    const { env } = await sandboxWith({ malformed: kind });
    const r = await runSgq(['graph', 'followers', 'jack'], { env });
    expect(r.code).toBe(7);
    expect(r.stderr).toContain(words);
    expect(lines(r.stderr)).toHaveLength(1);
    expect(r.stdout).toBe('');
  });
});

describe('proxies', () => {
  it('tunnels https:// through HTTPS_PROXY or https_proxy, and goes around it for NO_PROXY', async () => {
    // http:// targets are forwarded, not tunnelled: test/e2e/proxy.test.ts covers them with real proxies.
    const server = await httpsServer(cleanups);
    const env = { SGQ_BASE_URL: server.url, NODE_EXTRA_CA_CERTS: server.certFile };
    const proxy = await connectProxy(cleanups);
    const via = await runSgq(['info'], { env: { ...env, HTTPS_PROXY: proxy.url, NO_PROXY: '' } });
    expect(via.code).toBe(0);
    expect(proxy.tunnels()).toBe(1);
    const lower = await runSgq(['info'], { env: { ...env, https_proxy: proxy.url } });
    expect(lower.code).toBe(0);
    expect(proxy.tunnels()).toBe(2);
    const around = await runSgq(['info'], { env: { ...env, HTTPS_PROXY: proxy.url, NO_PROXY: '127.0.0.1' } });
    expect(around.code).toBe(0);
    expect(proxy.tunnels()).toBe(2);
  });

  it('a dead proxy is a network failure (exit 7)', async () => {
    const { env } = await sandboxWith({});
    const r = await runSgq(['info', '--retries', '0'], { env: { ...env, HTTP_PROXY: 'http://127.0.0.1:1' } });
    expect(r.code).toBe(7);
  });
});

describe('TLS', () => {
  it('refuses an untrusted certificate with exit 7 naming the cause, never downgrading', async () => {
    const server = await httpsServer(cleanups);
    const r = await runSgq(['info'], { env: { SGQ_BASE_URL: server.url } });
    expect(r.code).toBe(7);
    expect(r.stderr).toMatch(/TLS certificate of https:\/\/127\.0\.0\.1:\d+ not trusted: .*self[- ]signed/i);
    expect(r.stderr).toContain('NODE_EXTRA_CA_CERTS');
  });

  it('trusts a CA named by NODE_EXTRA_CA_CERTS', async () => {
    const server = await httpsServer(cleanups);
    const r = await runSgq(['info'], { env: { SGQ_BASE_URL: server.url, NODE_EXTRA_CA_CERTS: server.certFile } });
    expect(r.code).toBe(0);
    expect(ndjson(r.stdout)).toEqual([{ ok: true }]);
  });
});

// Users named on the command line go through node:http, a list on stdin through undici's pool
// (src/core/transport.ts): both stacks must fail, retry and time out alike, for each user.
describe.each([
  ['users named (node:http)', false],
  ['a list on stdin (undici)', true],
] as const)('the HTTP stack of a run of %s', (_name, piped) => {
  const users = ['jack', 'jill'];
  const sgq = (args: string[], env: Record<string, string>) =>
    piped ? runSgq(['graph', 'followers', '-', ...args], { env, stdin: users.join('\n') }) : runSgq(['graph', 'followers', ...users, ...args], { env });
  const ok: Reply = { body: envelope(1, null, [{ username: 'a' }]) };
  /** A stub that answers as `reply` says for its n-th request. */
  const serve = async (reply: (n: number) => Reply) => ({ SGQ_BASE_URL: (await stubs((_req, n) => reply(n))).url, SGQ_API_KEY: 'k' });

  it.each([
    ['an HTML page', { text: '<html><body>502</body></html>' }, 'HTML page'],
    ['a truncated body', { text: '{"data":[{"user' }, 'not valid JSON'],
    ['a body declared past 64 MiB', { text: '{}', headers: { 'content-length': String(65 * 1024 * 1024) } }, 'larger than 64 MiB'],
  ] as const)('%s is a clear exit 7 for each user', async (_kind, reply, words) => {
    const r = await sgq(['-q', '--retries', '0'], await serve(() => reply));
    expect(r.code).toBe(7);
    for (const user of users) expect(r.stderr).toContain(`${user}: the service sent`);
    expect(r.stderr).toContain(words);
    expect(r.stdout).toBe('');
  });

  it('refuses a body past 64 MiB that declares no length, before it is all in memory', async () => {
    const { createServer } = await import('node:http');
    const server = createServer((req, res) => {
      req.resume();
      // Chunked: the limit can only be found on the way.
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(1 << 20, 0x20);
      let sent = 0;
      const more = () => {
        while (sent < 80 && !res.destroyed) {
          sent++;
          if (!res.write(chunk)) return void res.once('drain', more);
        }
        res.end();
      };
      res.write('{"data":[');
      more();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
    const r = await sgq(['-q'], { SGQ_BASE_URL: `http://127.0.0.1:${(server.address() as { port: number }).port}`, SGQ_API_KEY: 'k' });
    expect(r.code).toBe(7);
    expect(r.stderr).toContain('larger than 64 MiB');
  });

  it('retries a reset connection', async () => {
    const r = await sgq(['-v'], await serve((n) => (n === 1 ? 'reset' : ok)));
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/retry 1\/3 .*(reset|closed)/);
    expect(lines(r.stdout)).toHaveLength(users.length);
  });

  it('--timeout covers a server that never answers, then retries, then exits 7', async () => {
    let hung = 0;
    const r = await sgq(['--timeout', '0.3', '--retries', '1', '-q'], await serve(() => (hung++, 'hang')));
    expect(r.code).toBe(7);
    expect(r.stderr).toContain('within 0.3s');
    expect(hung).toBe(2 * users.length);
  });

  it('refuses an untrusted certificate and trusts a CA named by NODE_EXTRA_CA_CERTS', async () => {
    const server = await httpsServer(cleanups);
    const refused = await sgq(['-q'], { SGQ_BASE_URL: server.url, SGQ_API_KEY: 'k' });
    expect(refused.code).toBe(7);
    expect(refused.stderr).toMatch(/TLS certificate of https:\/\/127\.0\.0\.1:\d+ not trusted/);
    const trusted = await sgq(['-q'], { SGQ_BASE_URL: server.url, SGQ_API_KEY: 'k', NODE_EXTRA_CA_CERTS: server.certFile });
    expect(trusted.code).toBe(0);
    expect(lines(trusted.stdout)).toHaveLength(users.length);
  });
});

it('keeps as many connections alive as users are in flight, not one per user', async () => {
  const { sandbox, env } = await sandboxWith({});
  const input = Array.from({ length: 60 }, (_, i) => `user${i}_3`).join('\n');
  const r = await runSgq(['graph', 'followers', '-', '--concurrency', '4', '-q'], { env, stdin: input });
  expect(r.code).toBe(0);
  expect(lines(r.stdout)).toHaveLength(180);
  expect(sandbox.connections()).toBeLessThanOrEqual(4);
});
