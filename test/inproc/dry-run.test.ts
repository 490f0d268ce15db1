import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { envelope, useStubs } from '../helpers/stub-server.js';
import { lines, runSgq, tempDir } from '../helpers/run.js';

const stubs = useStubs();
const key = 'secret-key-123456';

/** A server that answers every request, so a request sent by mistake would be counted, not fail the run. */
const counting = () => stubs(() => ({ body: envelope(1, 2, [{ username: 'a' }]) }));

describe('--dry-run sends nothing', () => {
  it('prints every request of a bounded --all run, key masked, and the worst case; zero requests reach the server', async () => {
    const stub = await counting();
    const r = await runSgq(['graph', 'followers', 'jack', 'dorsey', '--all', '--max-pages', '2', '--dry-run'], { env: { SGQ_BASE_URL: `${stub.url}/social/`, SGQ_API_KEY: key } });
    expect(r.code).toBe(0);
    expect(stub.requests).toHaveLength(0);
    expect(r.stdout).toBe('');
    const out = lines(r.stderr);
    expect(out.slice(0, 4)).toEqual(
      ['jack', 'dorsey'].flatMap((user) =>
        [1, 2].map((page) => `sgq: would send POST ${stub.url}/social/api/graph/get_followers {"user":"${user}","how":"username","page":${page}} (x-api-key ****3456)`),
      ),
    );
    // The graph routes cost 3 credits a call in the service's public credit table.
    expect(out[4]).toContain("2 users, at most 4 calls; worst case 12 credits (4 calls × 3 credits; price: the service's public credit table, read 2026-11-24)");
    expect(r.stderr).not.toContain(key);
  });

  it('needs no key and knows the price where the route table does', async () => {
    const stub = await counting();
    const r = await runSgq(['metadata', 'latest-tweets', 'jack', 'bob', '--dry-run', '--max-credits', '100'], { env: { SGQ_BASE_URL: stub.url } });
    expect(r.code).toBe(0);
    expect(stub.requests).toHaveLength(0);
    expect(r.stderr).toContain('(x-api-key: none configured)');
    expect(r.stderr).toContain('worst case 12 credits (2 calls × 6 credits; price:');
    const capped = await runSgq(['metadata', 'latest-tweets', 'jack', 'bob', '--dry-run', '--max-credits', '6'], { env: { SGQ_BASE_URL: stub.url } });
    expect(capped.stderr).toContain('worst case 6 credits, the --max-credits cap (12 credits without it)');
    expect(stub.requests).toHaveLength(0);
  });

  it('--all without --max-pages: the pages, and so the worst case, are unknown unless --max-credits caps it', async () => {
    const stub = await counting();
    const env = { SGQ_BASE_URL: stub.url, SGQ_API_KEY: key };
    const open = await runSgq(['metadata', 'tweets', 'jack', '--all', '--dry-run'], { env });
    expect(open.code).toBe(0);
    expect(open.stderr).toContain('… then page 2 and on, as long as next_page is set: how many is not known before the run');
    expect(open.stderr).toContain('at least 1 call, pages per user unknown');
    expect(open.stderr).toContain('worst case unknown: the number of pages is not known (--all without --max-pages or a --limit a page size bounds); add --max-credits N');
    const capped = await runSgq(['metadata', 'tweets', 'jack', '--all', '--dry-run', '--max-credits', '50'], { env });
    expect(capped.stderr).toContain('worst case 50 credits, the --max-credits cap');
    expect(stub.requests).toHaveLength(0);
  });

  it('reads users from stdin, sends the --since-last marks it would send, and the raw api command with its method', async () => {
    const stub = await counting();
    const dir = tempDir();
    const state = join(dir, 'marks.json');
    writeFileSync(state, JSON.stringify({ marks: { 'default graph/get_following username bob': '2024-04-07T10:00:00.000000+00:00' } }));
    const env = { SGQ_BASE_URL: stub.url, SGQ_API_KEY: key, SGQ_CONFIG_DIR: dir };
    const r = await runSgq(['graph', 'following', '-', '--since-last', '--state', state, '--dry-run'], { env, stdin: 'alice\nbob\n' });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('{"user":"alice","how":"username","page":1} (x-api-key ****3456)');
    expect(r.stderr).toContain('{"user":"bob","how":"username","page":1,"since":"2024-04-07T10:00:00.000000+00:00"}');
    const api = await runSgq(['api', 'info', '-X', 'GET', '-f', 'q=a b', '--dry-run'], { env });
    expect(lines(api.stderr)[0]).toBe(`sgq: would send GET ${stub.url}/api/info?q=a+b (x-api-key ****3456)`);
    expect(api.stderr).toContain('worst case 0 credits');
    expect(stub.requests).toHaveLength(0);
  });

  it('a usage error is still exit 2, before anything is printed', async () => {
    const stub = await counting();
    const r = await runSgq(['graph', 'followers', 'jack', '--max-pages', '2', '--dry-run'], { env: { SGQ_BASE_URL: stub.url } });
    expect(r.code).toBe(2);
    expect(lines(r.stderr)).toHaveLength(1);
    const header = await runSgq(['graph', 'followers', 'jack', '--no-header', '-o', 'json', '--dry-run'], { env: { SGQ_BASE_URL: stub.url } });
    expect(header.code).toBe(2);
    expect(stub.requests).toHaveLength(0);
  });
});
