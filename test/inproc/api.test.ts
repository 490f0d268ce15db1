import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ndjson, runSgq, tempDir } from '../helpers/run.js';
import { useSandbox } from '../helpers/sandbox.js';
import { envelope, useStubs } from '../helpers/stub-server.js';

const sb = useSandbox();
const stubs = useStubs();

describe('sgq api', () => {
  it('-f sends strings, -F sends typed values and @file contents', async () => {
    const stub = await stubs([{ body: envelope(1, null, [{ username: 'a' }]) }]);
    const file = join(tempDir(), 'since.txt');
    writeFileSync(file, '2024-04-07T00:00:00Z\n');
    const r = await runSgq(
      ['api', '/api/graph/get_followers', '-f', 'user=007', '-f', 'how=username', '-F', 'page=1', '-F', 'flag=true', '-F', 'none=null', '-F', `since=@${file}`],
      { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k' } },
    );
    expect(r.code).toBe(0);
    expect(stub.requests[0]!.url).toBe('/api/graph/get_followers');
    expect(stub.bodies()[0]).toEqual({ user: '007', how: 'username', page: 1, flag: true, none: null, since: '2024-04-07T00:00:00Z' });
    expect(ndjson(r.stdout)).toEqual([{ username: 'a' }]);
  });

  it('--method GET sends the fields as a query string', async () => {
    const stub = await stubs([{ body: { data: [] } }]);
    await runSgq(['api', 'info', '-X', 'GET', '-f', 'a=b c'], { env: { SGQ_BASE_URL: stub.url } });
    expect(stub.requests[0]!.method).toBe('GET');
    expect(stub.requests[0]!.url).toBe('/api/info?a=b+c');
  });

  it('--paginate follows next_page', async () => {
    const r = await runSgq(['api', 'graph/get_followers', '-f', 'user=big_1200', '-f', 'how=username', '--paginate'], { env: sb.env() });
    expect(r.code).toBe(0);
    expect(ndjson(r.stdout)).toHaveLength(1200);
  });

  it('--paginate takes a page typed 1.0 or 2 as that page, and refuses 1.5 and a word', async () => {
    const from = async (page: string) => runSgq(['api', 'graph/get_followers', '-f', 'user=big_1200', '-f', 'how=username', '-F', `page=${page}`, '--paginate'], { env: sb.env() });
    expect(ndjson((await from('1.0')).stdout)).toHaveLength(1200);
    expect(ndjson((await from('2')).stdout)).toHaveLength(700);
    for (const bad of ['1.5', 'two']) {
      const r = await from(bad);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/page must be a whole number from 1/);
    }
  });

  it('shares errors and exit codes with the generated commands', async () => {
    expect((await runSgq(['api', 'graph/get_followers', '-f', 'user=nobody', '-f', 'how=username'], { env: sb.env() })).code).toBe(4);
    expect((await runSgq(['api', 'lists/get_list_members', '-f', 'user=1'], { env: sb.env() })).code).toBe(6);
    expect((await runSgq(['api', 'graph/get_followers', '-f', 'user=x'], { env: { SGQ_BASE_URL: sb.sandbox.url } })).code).toBe(3);
    expect((await runSgq(['api', 'no/such_route'], { env: sb.env() })).code).toBe(4);
    expect((await runSgq(['api', 'graph/get_followers', '-X', 'BREW'], { env: sb.env() })).code).toBe(2);
  });

  it('prints a body without data as one record', async () => {
    const stub = await stubs([{ body: { status: 'ok', version: 3 } }]);
    const r = await runSgq(['api', 'info'], { env: { SGQ_BASE_URL: stub.url } });
    expect(ndjson(r.stdout)).toEqual([{ status: 'ok', version: 3 }]);
  });
});
