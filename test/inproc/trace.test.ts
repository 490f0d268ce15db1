import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { envelope, useStubs } from '../helpers/stub-server.js';
import { lines, runSgq, tempDir } from '../helpers/run.js';

const stubs = useStubs();
const key = 'secret-key-123456';

describe('--trace FILE', () => {
  it('writes every exchange, retries included, as one NDJSON line with the key masked everywhere', async () => {
    const stub = await stubs([
      { status: 503, body: { message: `down; your key ${key} is fine` }, headers: { 'x-request-id': 'r1' } },
      { body: envelope(1, 2, [{ username: 'a' }]) },
      { body: envelope(2, null, [{ username: 'b' }]) },
    ]);
    const file = join(tempDir(), 'trace.ndjson');
    const r = await runSgq(['graph', 'followers', 'jack', '--all', '--trace', file], {
      env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: key },
    });
    expect(r.code).toBe(0);
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain(key);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const exchanges = lines(text).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(exchanges.map((e) => [e.status, e.retry])).toEqual([[503, 0], [200, 1], [200, 0]]);
    const [failed, first] = exchanges;
    expect(failed).toMatchObject({
      method: 'POST',
      url: `${stub.url}/api/graph/get_followers`,
      request_headers: { 'x-api-key': '****3456', 'content-type': 'application/json', accept: '*/*' },
      request_body: '{"user":"jack","how":"username","page":1}',
      response_headers: { 'x-request-id': 'r1' },
    });
    expect(failed!.error).toContain('****3456');
    expect(first!.body_bytes).toBe(JSON.stringify(envelope(1, 2, [{ username: 'a' }])).length);
    for (const e of exchanges) {
      expect(Number.isNaN(Date.parse(e.time as string))).toBe(false);
      expect(typeof e.duration_ms).toBe('number');
    }
  });

  it('records a request that got no answer, and a key sent in a body by sgq api is masked too', async () => {
    const stub = await stubs(['reset', { body: { data: [{ ok: true }] } }]);
    const file = join(tempDir(), 'trace.ndjson');
    const r = await runSgq(['api', 'metadata/get_tweets', '-f', `token=${key}`, '--trace', file, '--retries', '1'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: key } });
    expect(r.code).toBe(0);
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain(key);
    const [reset, ok] = lines(text).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(reset).toMatchObject({ status: null, response_headers: null, retry: 0, request_body: '{"token":"****3456"}' });
    expect(ok).toMatchObject({ status: 200, retry: 1 });
  });

  it('an existing trace file readable by others is narrowed to 0600 before anything is written to it (#11)', async () => {
    const stub = await stubs([{ body: envelope(1, null, [{ username: 'a' }]) }]);
    const file = join(tempDir(), 'trace.ndjson');
    writeFileSync(file, 'an old trace\n', { mode: 0o644 });
    chmodSync(file, 0o644);
    const r = await runSgq(['graph', 'followers', 'jack', '--trace', file], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: key } });
    expect(r.code).toBe(0);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(lines(readFileSync(file, 'utf8'))).toHaveLength(1);
  });

  it('a trace file that cannot be opened is a usage error before any request', async () => {
    const stub = await stubs([]);
    const r = await runSgq(['graph', 'followers', 'jack', '--trace', join(tempDir(), 'no', 'such', 'dir', 't.ndjson')], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: key } });
    expect(r.code).toBe(2);
    expect(lines(r.stderr)).toHaveLength(1);
    expect(stub.requests).toHaveLength(0);
  });
});

describe('sgq api -i', () => {
  it('prints the status line and the headers before each body, like gh api -i', async () => {
    const stub = await stubs([
      { body: envelope(1, 2, [{ username: 'a' }]), headers: { 'x-request-id': 'one' } },
      { body: envelope(2, null, [{ username: 'b' }]), headers: { 'x-request-id': 'two' } },
    ]);
    const r = await runSgq(['api', 'graph/get_followers', '-f', 'user=jack', '--paginate', '-i'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: key } });
    expect(r.code).toBe(0);
    const [first, second] = r.stdout.split(/^(?=HTTP\/1\.1 )/m);
    expect(first).toMatch(/^HTTP\/1\.1 200 OK\n(?:[a-z-]+: .*\n)*x-request-id: one\n(?:[a-z-]+: .*\n)*\n/);
    expect(first!.endsWith('"username":"a"}\n')).toBe(true);
    expect(second).toMatch(/^HTTP\/1\.1 200 OK\n(?:[a-z-]+: .*\n)*x-request-id: two\n/);
    expect(first).toContain('content-type: application/json\n');
  });
});
