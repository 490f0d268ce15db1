import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { envelope, useStubs } from '../helpers/stub-server.js';
import { lines, runSgq, tempDir } from '../helpers/run.js';

const stubs = useStubs();
const key = 'secret-key-123456';

/** Two pages of followers, answered as often as asked. */
const pages = () => stubs((req) => {
  const page = (JSON.parse(req.body) as { page: number }).page;
  return { body: envelope(page, page === 1 ? 2 : null, [{ username: `u${page}`, id: '12345678901234567891' }], 1000 - page) };
});

const summaryOf = (stderr: string) => JSON.parse(lines(stderr).at(-1)!) as { totals: Record<string, number> };

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)]));
}

describe('--cache TTL', () => {
  it('a repeat within the TTL sends nothing, spends nothing and prints the same bytes', async () => {
    const stub = await pages();
    const env = { SGQ_BASE_URL: stub.url, SGQ_API_KEY: key, XDG_CACHE_HOME: tempDir(), SGQ_CONFIG_DIR: tempDir() };
    const argv = ['graph', 'followers', 'jack', '--all', '--cache', '1h', '--summary', 'json'];
    const first = await runSgq(argv, { env });
    expect(first.code).toBe(0);
    expect(stub.requests).toHaveLength(2);
    const again = await runSgq(argv, { env });
    expect(again.code).toBe(0);
    expect(stub.requests).toHaveLength(2);
    expect(again.stdout).toBe(first.stdout);
    expect(summaryOf(again.stderr).totals).toMatchObject({ pages: 2, cached_pages: 2, credits_used: 0 });
    // A cached answer's balance is not today's: the balance seen stays the first run's.
    expect((await runSgq(['credits'], { env })).stdout).toBe('998\n');
    // Without --cache, nothing is reused.
    await runSgq(['graph', 'followers', 'jack', '--all'], { env });
    expect(stub.requests).toHaveLength(4);
  });

  it('another key, another profile, another body or an expired entry misses', async () => {
    const stub = await pages();
    const config = tempDir();
    writeFileSync(join(config, 'config.json'), JSON.stringify({ profiles: { work: { 'base-url': stub.url, 'api-key': key } } }));
    const env = { SGQ_BASE_URL: stub.url, SGQ_API_KEY: key, XDG_CACHE_HOME: tempDir(), SGQ_CONFIG_DIR: config };
    const argv = ['graph', 'followers', 'jack', '--cache', '1h'];
    await runSgq(argv, { env });
    expect(stub.requests).toHaveLength(1);
    await runSgq(argv, { env: { ...env, SGQ_API_KEY: `${key}-other` } });
    expect(stub.requests).toHaveLength(2);
    await runSgq(['--profile', 'work', ...argv], { env });
    expect(stub.requests).toHaveLength(3);
    await runSgq([...argv, '--how', 'user_id'], { env });
    expect(stub.requests).toHaveLength(4);
    // The first run's entry is older than a millisecond by now: missed, and replaced.
    await runSgq(['graph', 'followers', 'jack', '--cache', '0.001s'], { env });
    expect(stub.requests).toHaveLength(5);
    await runSgq(argv, { env });
    expect(stub.requests).toHaveLength(5);
  });

  it('never keeps error records, a 429 or a placeholder', async () => {
    const answers = [
      { body: envelope(1, null, [{ error: 'no data for username = jack' }]) },
      // Error records beside good ones: the answer is used, but it is not a clean one to keep.
      { body: envelope(1, null, [{ username: 'a' }, { error: 'no data for username = jack' }]) },
      { status: 429, body: { message: 'slow down' }, headers: { 'retry-after': '0' } },
      { body: { message: 'not available yet' } },
    ];
    for (const answer of answers) {
      const stub = await stubs(() => answer);
      const env = { SGQ_BASE_URL: stub.url, SGQ_API_KEY: key, XDG_CACHE_HOME: tempDir() };
      const argv = ['graph', 'followers', 'jack', '--cache', '1h', '--retries', '0'];
      const first = await runSgq(argv, { env });
      expect(first.code).not.toBe(0);
      expect((await runSgq(argv, { env })).code).toBe(first.code);
      expect(stub.requests).toHaveLength(2);
      expect(lines((await runSgq(['cache', 'info'], { env })).stdout)).toContain('entries=0');
    }
  });

  it('the cache setting does what the flag does; cache info and clear', async () => {
    const stub = await pages();
    const cache = tempDir();
    const env = { SGQ_BASE_URL: stub.url, SGQ_API_KEY: key, XDG_CACHE_HOME: cache, SGQ_CACHE: '7d' };
    await runSgq(['graph', 'followers', 'jack'], { env });
    await runSgq(['graph', 'followers', 'jack'], { env });
    expect(stub.requests).toHaveLength(1);
    const info = lines((await runSgq(['cache', 'info'], { env })).stdout);
    expect(info).toEqual([`path=${join(cache, 'sgq')}`, 'entries=1', `bytes=${statSync(filesUnder(cache)[0]!).size}`]);
    const cleared = await runSgq(['cache', 'clear'], { env });
    expect(cleared.stderr).toContain('removed 1 cached answer');
    expect(lines((await runSgq(['cache', 'info'], { env })).stdout)).toContain('entries=0');
    await runSgq(['graph', 'followers', 'jack'], { env });
    expect(stub.requests).toHaveLength(2);
    expect((await runSgq(['config', 'set', 'cache', 'forever'])).code).toBe(2);
  });

  it('no file sgq writes holds the key: cache, trace, balances', async () => {
    const stub = await pages();
    const home = tempDir();
    const env = { HOME: home, XDG_CACHE_HOME: join(home, 'cache'), SGQ_CONFIG_DIR: join(home, 'config'), SGQ_BASE_URL: stub.url, SGQ_API_KEY: key };
    const r = await runSgq(['graph', 'followers', 'jack', '--all', '--cache', '1h', '--trace', join(home, 'trace.ndjson'), '--out', join(home, 'out.ndjson')], { env });
    expect(r.code).toBe(0);
    expect((await runSgq(['credits', '--json'], { env })).code).toBe(0);
    const files = filesUnder(home);
    expect(files.map((f) => f.slice(home.length + 1)).sort()).toEqual(expect.arrayContaining(['out.ndjson', 'trace.ndjson']));
    // The balance note of the service and profile (src/core/service.ts keys it).
    expect(files.some((f) => /\/config\/credits\/@[^/]+\/default\/note\.json$/.test(f))).toBe(true);
    expect(files.filter((f) => f.includes('/cache/sgq/'))).toHaveLength(2);
    for (const file of files) {
      expect(file).not.toContain(key);
      expect(readFileSync(file, 'utf8')).not.toContain(key);
      if (!file.endsWith('out.ndjson')) expect(statSync(file).mode & 0o777).toBe(0o600);
    }
  });
});
