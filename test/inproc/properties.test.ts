import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSgq } from '../helpers/run.js';
import { useSandbox } from '../helpers/sandbox.js';
import { stubServer, type Reply } from '../helpers/stub-server.js';

// No input, from the user or from the server, may crash sgq: every run ends with a code
// of the documented table (and never 1, which would be a bug), with no stack trace.

const DOCUMENTED = [0, 2, 3, 4, 5, 6, 7];
const KEY = 'property-secret-key-987654';
const sb = useSandbox();

function checkOutcome(r: { code: number; stdout: string; stderr: string }): void {
  expect(DOCUMENTED).toContain(r.code);
  expect(r.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
  expect(r.stdout + r.stderr).not.toContain(KEY);
  if (r.code !== 0) expect(r.stderr.trim().length).toBeGreaterThan(0);
}

describe('property: arguments', () => {
  const word = fc.oneof(
    fc.constantFrom(
      'graph', 'followers', 'following', 'alpha', 'score-history', 'classification', 'metadata', 'history', 'tweets', 'latest-tweets', 'follower-count', 'current',
      'userid', 'lists', 'members', 'info', 'api', 'config', 'get', 'set', 'unset', 'list', 'path', 'completion', 'bash',
      'jack', 'nobody', 'big_600', 'graph/get_followers',
      '--all', '--page', '--max-pages', '--limit', '--max-credits', '--since', '--how', '-o', '--output', '--fields', '--raw',
      '--concurrency', '--summary', '--timeout', '--retries', '--quiet', '-v', '--profile', '--base-url', '-f', '-F', '-X',
      'json', 'ndjson', 'csv', 'table', '0', '1', '2', '-1', '1e3', '24h', '7d', '2024-04-07T00:00:00Z', 'user=jack', 'page=x',
      '', ' ', '--', '-', 'http://', 'api-key', 'base-url',
    ),
    fc.string({ maxLength: 12 }),
  );

  it('any argv ends with a documented exit code and no trace', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(word, { maxLength: 7 }), async (argv) => {
        const r = await runSgq(argv, { env: { ...sb.env(), SGQ_API_KEY: KEY } });
        checkOutcome(r);
      }),
      { numRuns: 150 },
    );
  });
});

describe('property: server bodies', () => {
  let reply: Reply = { body: {} };
  let stub: Awaited<ReturnType<typeof stubServer>>;
  beforeAll(async () => {
    stub = await stubServer(() => reply);
  });
  afterAll(() => stub.close());

  const pagination = fc.oneof(fc.constant(null), fc.integer({ min: -2, max: 5 }), fc.string({ maxLength: 3 }), fc.double());
  const record = fc.oneof(
    fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
    fc.record({ error: fc.string({ maxLength: 20 }) }),
    fc.jsonValue({ maxDepth: 1 }),
  );
  const envelopeBody = fc.record(
    {
      user: fc.string({ maxLength: 5 }),
      page: pagination,
      next_page: pagination,
      previous_page: pagination,
      page_items: pagination,
      data: fc.oneof(fc.array(record, { maxLength: 5 }), fc.jsonValue({ maxDepth: 1 })),
      current_credits: fc.oneof(fc.integer(), fc.constant(null), fc.string({ maxLength: 3 })),
      message: fc.string({ maxLength: 10 }),
      Error: fc.string({ maxLength: 10 }),
    },
    { requiredKeys: [] },
  );
  const anyReply: fc.Arbitrary<Reply> = fc.oneof(
    fc.record({ status: fc.constantFrom(200, 201, 204, 301, 400, 401, 403, 404, 418, 422, 429, 500, 501, 503), body: envelopeBody }),
    fc.record({ status: fc.constantFrom(200, 404, 500), text: fc.string({ maxLength: 40 }) }),
    fc.record({ status: fc.constant(200), body: fc.jsonValue({ maxDepth: 3 }) }),
  );

  it('any answer ends with a documented exit code and no trace', async () => {
    await fc.assert(
      fc.asyncProperty(anyReply, fc.constantFrom('ndjson', 'json', 'csv', 'table'), async (r, format) => {
        reply = r;
        const result = await runSgq(['graph', 'followers', 'x', '--all', '--max-pages', '3', '--retries', '0', '-o', format], {
          env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: KEY },
        });
        checkOutcome(result);
      }),
      { numRuns: 150 },
    );
  });
});
