import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { lines, ndjson, runSgq, tempDir, marksIn } from '../helpers/run.js';
import { envelope, useStubs } from '../helpers/stub-server.js';

// Issue 18, "Messages and exits": what sgq says and how it exits when the service's answer is
// a rate limit, echoes the key, or is not the text it claims to be.

const stubs = useStubs();

describe('a 429 is a rate limit unless its body is the subscription body (#13)', () => {
  const SUBSCRIPTION = { Error: 'Subscription expired and credit value exceeded', Endpoint: '/graph/get_followers', 'Current credits': 0 };

  it('retries a 429 with Retry-After and a JSON Error string, then goes on to every user', async () => {
    const stub = await stubs((req, n) => {
      if (n === 1) return { status: 429, body: { Error: 'Too many requests, slow down' }, headers: { 'retry-after': '1' } };
      const user = (JSON.parse(req.body) as { user: string }).user;
      return { body: envelope(1, null, [{ username: `${user}-f` }], 100, user) };
    });
    const r = await runSgq(['graph', 'followers', 'a', 'b', '-v'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k' } });
    expect(r.code).toBe(0);
    expect(ndjson(r.stdout).map((x) => x.username).sort()).toEqual(['a-f', 'b-f']);
    expect(r.stderr).toContain('in 1000 ms: the service answered HTTP 429: Too many requests');
    expect(stub.requests).toHaveLength(3);
  });

  it('a rate limit that outlasts the retries is a transient failure (exit 7), not an expired subscription', async () => {
    const stub = await stubs(() => ({ status: 429, body: { Error: 'Too many requests' }, headers: { 'retry-after': '0' } }));
    const r = await runSgq(['graph', 'followers', 'a', '--retries', '1'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k' } });
    expect(r.code).toBe(7);
    expect(stub.requests).toHaveLength(2);
    expect(lines(r.stderr).join('\n')).not.toMatch(/renew the subscription/);
  });

  it('the spec body still exits 5 and is never retried, even with a Retry-After', async () => {
    const stub = await stubs(() => ({ status: 429, body: SUBSCRIPTION, headers: { 'retry-after': '1' } }));
    const r = await runSgq(['graph', 'followers', 'a'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k' } });
    expect(r.code).toBe(5);
    expect(stub.requests).toHaveLength(1);
    expect(r.stderr).toContain('Subscription expired and credit value exceeded');
  });
});

describe('the key is masked wherever the service echoes it (#10)', () => {
  const KEY = 'sk-live-0123456789abcdef';
  const env = (url: string) => ({ SGQ_BASE_URL: url, SGQ_API_KEY: KEY });
  const noKey = (r: { stdout: string; stderr: string }) => {
    expect(r.stdout).not.toContain(KEY);
    expect(r.stderr).not.toContain(KEY);
    expect(r.stderr).not.toContain(encodeURIComponent(KEY).slice(3));
  };

  it('in a 401 body, with --verbose and --summary json', async () => {
    const stub = await stubs([{ status: 401, body: { message: `invalid key ${KEY}` } }]);
    const r = await runSgq(['graph', 'followers', 'a', '-v', '--summary', 'json'], { env: env(stub.url) });
    expect(r.code).toBe(3);
    noKey(r);
    expect(r.stderr).toContain('invalid key ****cdef');
    const summary = JSON.parse(lines(r.stderr).at(-1)!) as object;
    expect(JSON.stringify(summary)).toContain('****cdef');
  });

  it('in an error record, alone or beside good records, and in a 503 retried with --verbose', async () => {
    const stub = await stubs((req) => {
      const user = (JSON.parse(req.body) as { user: string }).user;
      if (user === 'alone') return { body: envelope(1, null, [{ error: `no data for key ${KEY}` }], 100, user) };
      if (user === 'mixed') return { body: envelope(1, null, [{ username: 'm' }, { error: `key ${KEY} used up` }], 100, user) };
      return stub.requests.length === 3 ? { status: 503, text: `busy, key=${encodeURIComponent(KEY)}` } : { body: envelope(1, null, [{ username: 'r' }], 100, user) };
    });
    const r = await runSgq(['graph', 'followers', 'alone', 'mixed', 'retried', '-v', '--summary', 'json'], { env: env(stub.url) });
    expect(r.code).toBe(4);
    noKey(r);
    expect(r.stderr).toContain('no data for key ****cdef');
    expect(r.stderr).toContain('key ****cdef used up');
    expect(r.stderr).toContain('busy, key=****cdef');
  });

  it('in the failures the library throws', async () => {
    const { createClient } = await import('../../src/lib.js');
    const stub = await stubs([{ status: 401, body: { message: `invalid key ${KEY}` } }, { body: envelope(1, null, [{ error: `no data for key ${KEY}` }]) }]);
    const sgq = createClient({ baseUrl: stub.url, apiKey: KEY, env: {}, retries: 0 });
    for (let i = 0; i < 2; i++) {
      const error = await sgq.graph.followers('a').toArray({ all: true }).then(() => undefined, (e: unknown) => e);
      expect(error).toBeDefined();
      expect(JSON.stringify({ message: (error as Error).message, ...(error as { details: object }).details })).not.toContain(KEY);
    }
    await sgq.close();
  });
});

const servers: { close: () => void; closeAllConnections: () => void }[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

/** A loopback server that answers every request with these bytes, as they are. */
async function bytesServer(body: (user: string) => Buffer): Promise<{ url: string; requests: string[] }> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      // sgq asking a loopback address whether it is a sandbox (src/core/service.ts): not a sandbox.
      if (req.method === 'GET' && req.url === '/') return void res.writeHead(404).end('{"message":"Not Found"}');
      const user = (JSON.parse(text) as { user: string }).user;
      requests.push(user);
      res.writeHead(200, { 'content-type': 'application/json' }).end(body(user));
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

describe('a body that is not valid UTF-8 fails its page (#12)', () => {
  // Two names that differ only in their invalid byte: decoded leniently, both became "bad\uFFFD".
  const page = (user: string) =>
    Buffer.concat([Buffer.from(`{"page":1,"next_page":null,"data":[{"username":"bad`), Buffer.from(user === 'good' ? 'ok' : '\xff', 'latin1'), Buffer.from(`"},{"username":"bad`), Buffer.from('\xfe', 'latin1'), Buffer.from(`"}],"current_credits":5}`)]);

  it.each([
    ['node:http', ['graph', 'followers', 'jack'], undefined],
    ['undici (a list on stdin)', ['graph', 'followers', '-'], 'jack\n'],
    ['--raw', ['graph', 'followers', 'jack', '--raw'], undefined],
  ])('through %s: exit 7, one line naming the user, nothing written', async (_name, args, stdin) => {
    const server = await bytesServer(page);
    const r = await runSgq([...args, '--retries', '0'], { env: { SGQ_BASE_URL: server.url, SGQ_API_KEY: 'k' }, stdin });
    expect(r.code).toBe(7);
    expect(r.stdout).toBe('');
    expect(lines(r.stderr).filter((l) => /UTF-8/.test(l))).toEqual([expect.stringMatching(/^sgq: jack: .*the service sent a body that is not valid UTF-8/)]);
    expect(r.stderr).not.toContain('\uFFFD');
  });

  it('moves no --since-last mark and stores no snapshot', async () => {
    const server = await bytesServer(page);
    const dir = tempDir();
    const state = join(dir, 'marks.json');
    const env = { SGQ_BASE_URL: server.url, SGQ_API_KEY: 'k', XDG_DATA_HOME: join(dir, 'data') };
    const marked = await runSgq(['graph', 'followers', 'jack', 'good', '--all', '--since-last', '--state', state, '--retries', '0', '--concurrency', '1'], { env });
    expect(marked.code).toBe(7);
    const marks = marksIn(state);
    expect(Object.keys(marks).filter((k) => k.endsWith(' jack'))).toEqual([]);
    const snapshot = await runSgq(['graph', 'followers', 'jack', '--all', '--snapshot', '--retries', '0'], { env });
    expect(snapshot.code).toBe(7);
    const list = await runSgq(['snapshots', 'list', 'jack'], { env });
    expect(list.code).toBe(0);
    expect(list.stdout).toBe('');
  });
});

describe('deep JSON is written or refused with a message naming the limit (#16)', () => {
  const FORMATS = [['-o', 'ndjson'], ['-o', 'json'], ['-o', 'yaml'], ['-o', 'table'], ['-o', 'csv'], ['--jq', '.']];
  /** A record whose field `n` nests `levels` objects: the record itself is one level more. */
  const deepRecord = (levels: number) => `{"username":"deep","n":${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}}`;
  const body = (levels: number) => `{"page":1,"next_page":null,"data":[${deepRecord(levels)}],"current_credits":5}`;

  it.each([1_500, 8_000, 100_000])('from the service, %i deep: exit 7 in every format, one line naming the limit', async (depth) => {
    const stub = await stubs(() => ({ text: body(depth) }));
    for (const format of FORMATS) {
      const r = await runSgq(['graph', 'followers', 'jack', ...format, '--retries', '0'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k' } });
      expect(r.code, format.join(' ')).toBe(7);
      expect(r.stdout.trim().replace(/^\[\s*\]$/, '')).toBe('');
      expect(lines(r.stderr)).toEqual([expect.stringMatching(/^sgq: jack: .*JSON nested deeper than 256 levels, the most sgq reads/)]);
    }
  });

  it('from the service, at the limit: written in every format', async () => {
    // The envelope and `data` are two levels, the record one more.
    const stub = await stubs(() => ({ text: body(253) }));
    for (const format of FORMATS) {
      const r = await runSgq(['graph', 'followers', 'jack', ...format], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k' } });
      expect(r.code, `${format.join(' ')}: ${r.stderr}`).toBe(0);
      expect(r.stdout).toContain('deep');
    }
  });

  it.each([1_500, 8_000, 100_000])('in sgq fmt, %i deep: exit 2 in every format, naming the line and the limit', async (depth) => {
    for (const format of FORMATS) {
      const r = await runSgq(['fmt', ...format], { stdin: `{"username":"a"}\n${deepRecord(depth)}\n` });
      expect(r.code, format.join(' ')).toBe(2);
      expect(lines(r.stderr)).toEqual(['sgq: stdin line 2 is JSON nested deeper than 256 levels, the most sgq reads']);
    }
  });

  it('in sgq fmt, at the limit: written in every format', async () => {
    for (const format of FORMATS) {
      const r = await runSgq(['fmt', ...format], { stdin: `${deepRecord(255)}\n` });
      expect(r.code, `${format.join(' ')}: ${r.stderr}`).toBe(0);
      expect(r.stdout).toContain('deep');
    }
  });

  it('in sgq diff, 8000 deep: exit 2 naming the limit', async () => {
    const dir = tempDir();
    const [older, newer] = [join(dir, 'old.ndjson'), join(dir, 'new.ndjson')];
    writeFileSync(older, '{"username":"a"}\n');
    writeFileSync(newer, `{"username":"a"}\n${deepRecord(8_000)}\n`);
    const r = await runSgq(['diff', older, newer]);
    expect(r.code).toBe(2);
    expect(lines(r.stderr)).toEqual(['sgq: a record is JSON nested deeper than 256 levels, the most sgq reads']);
  });
});
