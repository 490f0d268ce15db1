import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { lines, ndjson, tempDir } from '../helpers/run.js';
import { sgq } from '../helpers/e2e.js';
import { httpsServer } from '../helpers/network.js';
import { brokenProxy, installed, startSquid, startTinyproxy, type RealProxy } from '../helpers/proxies.js';
import { waitFor } from '../helpers/wait.js';
import { useSandbox } from '../helpers/sandbox.js';

// Every variable sgq could take a proxy from, unset (empty), so the machine's own settings
// (a CI runner's no_proxy=127.0.0.1, say) cannot change what a test means.
const NO_PROXY_ENV = Object.fromEntries(
  ['http_proxy', 'HTTP_PROXY', 'https_proxy', 'HTTPS_PROXY', 'all_proxy', 'ALL_PROXY', 'no_proxy', 'NO_PROXY'].map((name) => [name, '']),
);

const sandbox = useSandbox();
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

describe.each([
  { name: 'squid', start: startSquid },
  { name: 'tinyproxy', start: startTinyproxy },
])('through $name with its stock configuration', ({ name, start }) => {
  const missing = !installed(name);
  const daemon: { proxy?: RealProxy } = {};
  const daemonCleanups: (() => Promise<void> | void)[] = [];
  const proxy = async () => (daemon.proxy ??= await start(daemonCleanups));
  afterAll(async () => {
    for (const c of daemonCleanups.splice(0)) await c();
  });

  it.skipIf(missing)(`reaches an http:// service by absolute-URI forwarding, never CONNECT${missing ? ` (skipped: ${name} is not installed; apt-get install ${name})` : ''}`, async () => {
    const { url, log } = await proxy();
    const r = await sgq(['graph', 'followers', 'big_10'], { env: { ...NO_PROXY_ENV, ...sandbox.env(), HTTP_PROXY: url } });
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    expect(lines(r.stdout)).toHaveLength(10);
    const target = `${sandbox.sandbox.url}/api/graph/get_followers`;
    const logged = await waitFor(() => log().includes(target) && log(), `${name} to log the request`);
    expect(logged).toMatch(new RegExp(`POST ${target.replace(/[.:/]/g, '\\$&')}`));
    expect(logged).not.toMatch(/CONNECT [\d.]+:\d+/);
  });

  it.skipIf(missing)(`tunnels to an https:// service with CONNECT, trusting NODE_EXTRA_CA_CERTS${missing ? ` (skipped: ${name} is not installed)` : ''}`, async () => {
    const { url, log } = await proxy();
    const server = await httpsServer(cleanups);
    const r = await sgq(['info'], { env: { ...NO_PROXY_ENV, SGQ_BASE_URL: server.url, SGQ_API_KEY: 'k', HTTPS_PROXY: url, NODE_EXTRA_CA_CERTS: server.certFile } });
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    expect(ndjson(r.stdout)).toEqual([{ ok: true }]);
    const hostPort = server.url.replace('https://', '');
    await waitFor(() => log().includes(`CONNECT ${hostPort}`), `${name} to log CONNECT ${hostPort}`);
    // Without the CA the certificate seen through the tunnel is the service's, and is refused.
    const untrusted = await sgq(['info'], { env: { ...NO_PROXY_ENV, SGQ_BASE_URL: server.url, SGQ_API_KEY: 'k', HTTPS_PROXY: url } });
    expect(untrusted.exitCode).toBe(7);
    expect(untrusted.stderr).toContain(`TLS certificate of ${server.url} not trusted`);
  });
});

describe('a proxy that fails', () => {
  // A generous bound on the test, not a measurement: before the fix these runs never ended.
  const RUN = { timeout: 60_000 };

  it.each([
    ['https', 'close'],
    ['https', 'close-at-once'],
    ['http', 'close'],
    ['http', 'close-at-once'],
  ] as const)('%s:// through a proxy that does "%s": exit 7 naming the proxy, no reconnect loop', async (scheme, behaviour) => {
    const proxy = await brokenProxy(behaviour, cleanups);
    const base = scheme === 'https' ? 'https://127.0.0.1:9' : sandbox.sandbox.url;
    const variable = scheme === 'https' ? 'HTTPS_PROXY' : 'HTTP_PROXY';
    const r = await sgq(['info', '--timeout', '1', '--retries', '2'], { ...RUN, env: { ...NO_PROXY_ENV, SGQ_BASE_URL: base, SGQ_API_KEY: 'k', [variable]: proxy.url } });
    expect(r.timedOut).toBe(false);
    expect(r.exitCode).toBe(7);
    expect(lines(r.stderr)[0]).toContain(`through the proxy ${proxy.url} (from ${variable})`);
    expect(r.stderr).toContain(`check ${variable} or unset it`);
    // One connection per attempt, give or take; a reconnect loop makes thousands.
    expect(proxy.connections()).toBeGreaterThanOrEqual(3);
    expect(proxy.connections()).toBeLessThanOrEqual(10);
  }, 90_000);

  it('a proxy that never answers CONNECT: each attempt ends at --timeout, then exit 7', async () => {
    const proxy = await brokenProxy('silent', cleanups);
    const r = await sgq(['info', '--timeout', '0.5', '--retries', '1'], { ...RUN, env: { ...NO_PROXY_ENV, SGQ_BASE_URL: 'https://127.0.0.1:9', HTTPS_PROXY: proxy.url } });
    expect(r.timedOut).toBe(false);
    expect(r.exitCode).toBe(7);
    expect(r.stderr).toContain(`no complete answer from https://127.0.0.1:9 through the proxy ${proxy.url} (from HTTPS_PROXY) within 0.5s (after 1 retry)`);
    expect(proxy.connections()).toBe(2);
  }, 90_000);

  it('a proxy that answers CONNECT with 403: exit 7 at once, not retried', async () => {
    const proxy = await brokenProxy('forbid', cleanups);
    const r = await sgq(['info', '--timeout', '1', '--retries', '2'], { ...RUN, env: { ...NO_PROXY_ENV, SGQ_BASE_URL: 'https://127.0.0.1:9', https_proxy: proxy.url } });
    expect(r.exitCode).toBe(7);
    expect(lines(r.stderr)[0]).toBe(`sgq: the proxy ${proxy.url} (from https_proxy) refused to connect to https://127.0.0.1:9 (HTTP 403); check https_proxy or unset it`);
    expect(proxy.connections()).toBe(1);
  }, 90_000);

  it.each(['http', 'https'] as const)('a proxy that wants credentials for %s://: exit 7 at once, saying where they go', async (scheme) => {
    const proxy = await brokenProxy('auth', cleanups);
    const base = scheme === 'https' ? 'https://127.0.0.1:9' : sandbox.sandbox.url;
    const variable = scheme === 'https' ? 'HTTPS_PROXY' : 'http_proxy';
    const r = await sgq(['info'], { ...RUN, env: { ...NO_PROXY_ENV, SGQ_BASE_URL: base, SGQ_API_KEY: 'k', [variable]: proxy.url } });
    expect(r.exitCode).toBe(7);
    expect(lines(r.stderr)[0]).toBe(`sgq: the proxy ${proxy.url} (from ${variable}) asks for credentials (HTTP 407); put them in ${variable} as http://USER:PASSWORD@HOST:PORT`);
    expect(proxy.connections()).toBe(1);
  }, 90_000);

  it('an unreachable proxy is named with its variable, never with its password', async () => {
    const closed = await brokenProxy('close', cleanups);
    const port = new URL(closed.url).port;
    await cleanups.pop()!(); // now nothing listens on that port
    const r = await sgq(['info', '--retries', '0'], { env: { ...NO_PROXY_ENV, SGQ_BASE_URL: 'https://127.0.0.1:9', HTTPS_PROXY: `http://me:hunter2@127.0.0.1:${port}` } });
    expect(r.exitCode).toBe(7);
    expect(lines(r.stderr)[0]).toBe(`sgq: cannot reach the proxy http://****@127.0.0.1:${port} (from HTTPS_PROXY): connection refused; check HTTPS_PROXY or unset it`);
    expect(r.stdout + r.stderr).not.toContain('hunter2');
  });

  it('a proxy sgq cannot use is exit 3 before --out is touched, naming its variable', async () => {
    const dir = tempDir();
    const r = await sgq(['info', '--out', join(dir, 'f.ndjson')], { env: { ...NO_PROXY_ENV, SGQ_BASE_URL: 'https://127.0.0.1:9', ALL_PROXY: 'socks5://me:hunter2@127.0.0.1:1080' } });
    expect(r.exitCode).toBe(3);
    expect(lines(r.stderr)).toEqual(['sgq: ALL_PROXY names a socks5 proxy, which sgq does not support; use an http:// or https:// proxy, or unset ALL_PROXY']);
    expect(readdirSync(dir)).toEqual([]);
  });

  it.each(['127.0.0.1', '127.0.0.0/8', '.0.0.1', '*'])('NO_PROXY=%s goes around the proxy', async (noProxy) => {
    const proxy = await brokenProxy('close', cleanups);
    const r = await sgq(['graph', 'followers', 'big_10'], { env: { ...NO_PROXY_ENV, ...sandbox.env(), HTTP_PROXY: proxy.url, ALL_PROXY: proxy.url, NO_PROXY: noProxy } });
    if (noProxy === '.0.0.1') {
      // An IP address matches only as an address or a network, never as a domain suffix (as curl).
      expect(r.exitCode).toBe(7);
      return;
    }
    expect(r.exitCode).toBe(0);
    expect(lines(r.stdout)).toHaveLength(10);
    expect(proxy.connections()).toBe(0);
  });
});
