import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_BASE_URL, resolveConfig } from '../../src/core/config.js';
import { sgq } from '../helpers/e2e.js';
import { envelope, useStubs } from '../helpers/stub-server.js';
import { lines, runSgq, tempDir } from '../helpers/run.js';

// The service's public address is sgq's default base URL. No test sends anything to it: the
// default is seen where nothing is sent (--dry-run, config list, describe), and every run
// that sends has its own base URL (test/helpers/no-public-address.ts refuses the host).

const stubs = useStubs();
const key = 'secret-key-123456';
const PUBLIC = 'https://toto.oz.xyz';
/** The first request line a dry run of `graph followers jack` prints. */
const wouldSend = (origin: string) => `sgq: would send POST ${origin}/api/graph/get_followers {"user":"jack","how":"username","page":1} (x-api-key: none configured)`;

describe('the public address by default', () => {
  it('is https://toto.oz.xyz', () => {
    expect(DEFAULT_BASE_URL).toBe(PUBLIC);
    expect(resolveConfig({}, { SGQ_CONFIG_DIR: tempDir() }).baseUrl).toBe(PUBLIC);
  });

  it('--dry-run with nothing configured shows the requests going there, and sends nothing', async () => {
    const r = await runSgq(['graph', 'followers', 'jack', '--dry-run']);
    expect(r.code).toBe(0);
    expect(lines(r.stderr)[0]).toBe(wouldSend(PUBLIC));
  });

  it('the built binary too: its dry run shows the default, and sends nothing', async () => {
    const r = await sgq(['graph', 'followers', 'jack', '--dry-run']);
    expect(r.exitCode).toBe(0);
    expect(r.stderr.split('\n')[0]).toBe(wouldSend(PUBLIC));
  });

  it('is the last of flag > SGQ_BASE_URL > profile > default', async () => {
    const config = tempDir();
    const first = async (args: string[], env: Record<string, string> = {}) => lines((await runSgq(['graph', 'followers', 'jack', '--dry-run', ...args], { env: { SGQ_CONFIG_DIR: config, ...env } })).stderr)[0];
    expect(await first([])).toBe(wouldSend(PUBLIC));
    writeFileSync(join(config, 'config.json'), JSON.stringify({ profiles: { default: { 'base-url': 'https://profile.example' } } }));
    expect(await first([])).toBe(wouldSend('https://profile.example'));
    expect(await first([], { SGQ_BASE_URL: 'https://env.example' })).toBe(wouldSend('https://env.example'));
    expect(await first(['--base-url', 'https://flag.example'], { SGQ_BASE_URL: 'https://env.example' })).toBe(wouldSend('https://flag.example'));
  });

  it('config list shows it, saying it is the default; config get too', async () => {
    const env = { SGQ_CONFIG_DIR: tempDir() };
    const json = JSON.parse((await runSgq(['config', 'list', '-o', 'json'], { env })).stdout) as { settings: { name: string; value: string | null; source: string | null; default?: string }[] };
    expect(json.settings.find((s) => s.name === 'base-url')).toMatchObject({ value: PUBLIC, source: 'default', default: PUBLIC });
    expect(json.settings.find((s) => s.name === 'timeout')).toMatchObject({ value: null, source: null });
    const text = await runSgq(['config', 'list'], { env });
    expect(text.stdout).toBe(`base-url=${PUBLIC}\n`);
    expect(text.stderr).toBe(`base-url is not set in profile default: ${PUBLIC} is sgq's default\n`);
    const get = await runSgq(['config', 'get', 'base-url'], { env });
    expect({ code: get.code, stdout: get.stdout }).toEqual({ code: 0, stdout: `${PUBLIC}\n` });
    expect(get.stderr).toBe(`base-url is not set in profile default: ${PUBLIC} is sgq's default\n`);
  });

  it('describe --json gives the setting its default', async () => {
    const d = JSON.parse((await runSgq(['describe', '--json'])).stdout) as { settings: { name: string; default?: string }[] };
    expect(d.settings.find((s) => s.name === 'base-url')!.default).toBe(PUBLIC);
    expect(d.settings.find((s) => s.name === 'timeout')!.default).toBeUndefined();
  });

  it('exit 3 is a missing key, checked before anything is sent', async () => {
    const r = await runSgq(['graph', 'followers', 'jack']);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/^sgq: no API key configured \(profile default\)/);
    expect(lines(r.stderr)).toHaveLength(1);
  });
});

describe('a base URL that ends in /api includes the service /api', () => {
  it('the address the clients paste, with or without a slash, in any case: no /api/api', async () => {
    const stub = await stubs(() => ({ body: envelope(1, null, []) }));
    for (const base of [`${stub.url}/api`, `${stub.url}/api/`, `${stub.url}/API`, stub.url]) {
      expect((await runSgq(['graph', 'followers', 'jack'], { env: { SGQ_BASE_URL: base, SGQ_API_KEY: key } })).code).toBe(0);
    }
    expect((await runSgq(['info', '--base-url', `${stub.url}/api`])).code).toBe(0);
    expect(stub.requests.map((r) => r.url)).toEqual([...Array(4).fill('/api/graph/get_followers'), '/api/info']);
  });

  it('a gateway under a prefix is written up to its own /api', async () => {
    const stub = await stubs(() => ({ body: envelope(1, null, []) }));
    for (const base of [`${stub.url}/social/api`, `${stub.url}/social`]) {
      expect((await runSgq(['graph', 'followers', 'jack'], { env: { SGQ_BASE_URL: base, SGQ_API_KEY: key } })).code).toBe(0);
    }
    // A prefix that is itself named api is written with the service's /api after it.
    expect((await runSgq(['graph', 'followers', 'jack'], { env: { SGQ_BASE_URL: `${stub.url}/api/api`, SGQ_API_KEY: key } })).code).toBe(0);
    expect(stub.requests.map((r) => r.url)).toEqual(['/social/api/graph/get_followers', '/social/api/graph/get_followers', '/api/api/graph/get_followers']);
  });

  it('--cache takes the two ways of writing the address for one: the answer kept by one serves the other', async () => {
    const stub = await stubs(() => ({ body: envelope(1, null, [{ username: 'a' }]) }));
    const env = { SGQ_API_KEY: key, SGQ_CONFIG_DIR: tempDir(), XDG_CACHE_HOME: tempDir() };
    for (const base of [`${stub.url}/api`, stub.url]) {
      expect((await runSgq(['graph', 'followers', 'jack', '--cache', '1h', '--base-url', base], { env })).code).toBe(0);
    }
    expect(stub.requests).toHaveLength(1);
  });

  it('--dry-run and sgq api show the same', async () => {
    const r = await runSgq(['graph', 'followers', 'jack', '--dry-run', '--base-url', `${PUBLIC}/api`]);
    expect(lines(r.stderr)[0]).toBe(wouldSend(PUBLIC));
    const stub = await stubs(() => ({ body: { data: [] } }));
    expect((await runSgq(['api', '/api/info', '--base-url', `${stub.url}/api`])).code).toBe(0);
    expect(stub.requests.map((q) => q.url)).toEqual(['/api/info']);
  });
});
