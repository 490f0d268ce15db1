import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from '../../src/lib.js';
import { lines, ndjson, runSgq, tempDir } from '../helpers/run.js';
import { envelope } from '../helpers/stub-server.js';
import { until } from '../helpers/wait.js';

// `--parallel`: pages of one user asked at once. A server of its own counts what matters:
// which pages were asked, how many were in flight past the pages its answers had named, and
// which calls the client gave up on. Its answers come back out of order on purpose.

interface PagedOptions {
  /** Pages that exist, numbered from 1. */
  pages: number;
  size?: number;
  /** What to do with a request for a page; undefined answers it (after its delay). */
  special?: (page: number, res: ServerResponse, answered: ReadonlySet<number>) => 'hold' | 'fail' | undefined;
  /** What a page's answer waits for (the pages asked so far given), if anything. */
  gate?: (page: number, asked: readonly number[]) => Promise<void> | undefined;
}

const open: { close: () => void }[] = [];
afterEach(() => {
  for (const s of open.splice(0)) s.close();
});

async function pagedServer({ pages, size = 10, special, gate }: PagedOptions) {
  const asked: number[] = [];
  const inFlight = new Set<number>();
  /** The highest page an answer has named as next: pages past it are guesses. */
  let named = 0;
  let maxInFlight = 0;
  let maxGuesses = 0;
  let closedUnanswered = 0;
  /** Whether each request arrived after page 1 was answered. */
  const afterFirst: boolean[] = [];
  let firstAnswered = false;
  const answeredPages = new Set<number>();
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      // Not a page: sgq asking whether this is its sandbox, or reading the balance (free) under --max-credits.
      if (req.method !== 'POST') return void res.writeHead(404).end();
      if (req.url?.endsWith('/metadata/get_userid')) return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[],"current_credits":1000}');
      const page = (JSON.parse(body) as { page: number }).page;
      asked.push(page);
      afterFirst.push(firstAnswered);
      inFlight.add(page);
      maxInFlight = Math.max(maxInFlight, inFlight.size);
      maxGuesses = Math.max(maxGuesses, [...inFlight].filter((p) => p > named && p > 1).length);
      let answered = false;
      res.on('close', () => {
        inFlight.delete(page);
        if (!answered) closedUnanswered++;
      });
      const answer = () => {
        const data = page <= pages ? Array.from({ length: size }, (_, i) => ({ username: `p${page}-${i}` })) : [];
        const next = page < pages ? page + 1 : null;
        if (next !== null) named = Math.max(named, next);
        answered = true;
        answeredPages.add(page);
        if (page === 1) firstAnswered = true;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(envelope(page, next, data, 1000 - page)));
      };
      const how = special?.(page, res, answeredPages);
      if (how === 'hold') return;
      if (how === 'fail') {
        answered = true;
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"message":"boom"}');
        return;
      }
      // Later pages of a window often answer first: the order of records must not follow.
      const later = () => setTimeout(answer, (page * 7) % 5);
      const waitFor = gate?.(page, asked);
      // A gate that times out answers its page with why, so the run (and the test) fails on it.
      const refuse = (error: Error) => void res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ message: `the test's gate: ${error.message}` }));
      if (waitFor) waitFor.then(later, refuse);
      else later();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const stop = () => {
    server.closeAllConnections();
    server.close();
  };
  open.push({ close: stop });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    asked,
    afterFirst,
    stats: () => ({ maxInFlight, maxGuesses, closedUnanswered }),
  };
}

const env = (url: string) => ({ SGQ_BASE_URL: url, SGQ_API_KEY: 'k' });
const summaryOf = (stderr: string) =>
  JSON.parse(lines(stderr).at(-1)!) as { totals: { pages: number; records: number; extra_calls: number }; users: { extra_calls?: number }[] };
const expected = (pages: number, size = 10) => Array.from({ length: pages * size }, (_, i) => `p${Math.floor(i / size) + 1}-${i % size}`);

describe('--parallel', () => {
  it('writes every record in page order, asks page 1 alone and never guesses more than n-1 pages ahead', async () => {
    const s = await pagedServer({ pages: 37 });
    const r = await runSgq(['graph', 'followers', 'jack', '--all', '--parallel', '4', '--summary', 'json'], { env: env(s.url) });
    expect(r.code).toBe(0);
    expect(ndjson(r.stdout).map((x) => x.username)).toEqual(expected(37));
    expect(s.asked[0]).toBe(1);
    // Page 2 and the rest went out only once page 1 had answered.
    expect(s.afterFirst.slice(1).every(Boolean)).toBe(true);
    expect(s.stats().maxGuesses).toBeLessThanOrEqual(3);
    expect(s.stats().maxInFlight).toBeGreaterThan(1);
    expect(s.stats().maxInFlight).toBeLessThanOrEqual(4);
    // Every page once; what went past page 37 is reported, and is at most n-1 calls.
    const past = s.asked.filter((p) => p > 37);
    const { extra_calls } = summaryOf(r.stderr).totals;
    expect(extra_calls).toBeGreaterThanOrEqual(past.length);
    expect(extra_calls).toBeLessThanOrEqual(3);
    expect(s.asked.filter((p) => p <= 37).sort((a, b) => a - b)).toEqual(Array.from({ length: 37 }, (_, i) => i + 1));
    expect(past.length).toBeLessThanOrEqual(3);
    const summary = summaryOf(r.stderr);
    expect(summary.totals).toMatchObject({ pages: 37, records: 370 });
  });

  it('a one-page list costs one call, as without --parallel', async () => {
    const s = await pagedServer({ pages: 1 });
    const r = await runSgq(['graph', 'followers', 'jack', '--all', '--parallel', '8'], { env: env(s.url) });
    expect(r.code).toBe(0);
    expect(s.asked).toEqual([1]);
  });

  it('cancels the calls past a page that ends the list, without waiting for their answers', async () => {
    // Pages past the end are never answered: the run ends only if it gives up on them. The
    // last page answers once a call past it has arrived (on a busy machine the calls past the
    // end could otherwise be given up before they reached the server, and none be seen).
    const s = await pagedServer({
      pages: 6,
      special: (page) => (page > 6 ? 'hold' : undefined),
      gate: (page, asked) => (page === 6 ? until(() => asked.some((p) => p > 6), 'a call past the last page') : undefined),
    });
    const r = await runSgq(['graph', 'followers', 'jack', '--all', '--parallel', '4', '--summary', 'json'], { env: env(s.url) });
    expect(r.code).toBe(0);
    expect(ndjson(r.stdout)).toHaveLength(60);
    const past = s.asked.filter((p) => p > 6).length;
    expect(past).toBeGreaterThan(0);
    expect(past).toBeLessThanOrEqual(3);
    // The client counts every call it started; one cancelled on its way may never reach the server.
    expect(summaryOf(r.stderr).totals.extra_calls).toBeGreaterThanOrEqual(past);
    expect(summaryOf(r.stderr).totals.extra_calls).toBeLessThanOrEqual(3);
    // The server sees each given-up call's connection close (when it notices is up to it).
    // Both counts are read live: a cancelled call may reach the server after the run ended.
    await until(() => s.stats().closedUnanswered === s.asked.filter((p) => p > 6).length, 'the calls past the end to be closed');
  });

  it('says in the text summary how many calls went past the end', async () => {
    const s = await pagedServer({ pages: 6 });
    const r = await runSgq(['graph', 'followers', 'jack', '--all', '--parallel', '4', '-v'], { env: env(s.url) });
    expect(r.stderr).toMatch(/sgq: 6 pages, 60 records, [123] extra calls? \(--parallel\), /);
  });

  it('a failure on page k keeps the pages before k, even when later pages answered first, and resumes from k', async () => {
    const s = await pagedServer({ pages: 20, special: (page) => (page === 7 ? 'fail' : undefined) });
    const r = await runSgq(['graph', 'followers', 'jack', '--all', '--parallel', '4', '--retries', '0', '--summary', 'json'], { env: env(s.url) });
    expect(r.code).not.toBe(0);
    expect(ndjson(r.stdout).map((x) => x.username)).toEqual(expected(6));
    expect(r.stderr).toContain('jack: page 7 failed');
    expect(r.stderr).toContain('records before page 7 were written; resume with: sgq graph followers jack --page 7 --all --parallel 4 ');
    // The pages asked past 7 wrote nothing: they are counted, and bounded by the window.
    expect(summaryOf(r.stderr).totals.pages).toBe(6);
    expect(summaryOf(r.stderr).totals.extra_calls).toBeGreaterThanOrEqual(s.asked.filter((p) => p > 7).length);
    expect(summaryOf(r.stderr).totals.extra_calls).toBeLessThanOrEqual(3);

    // The resume, against a service that works again, brings exactly the rest.
    const fixed = await pagedServer({ pages: 20 });
    const rest = await runSgq(['graph', 'followers', 'jack', '--page', '7', '--all', '--parallel', '4'], { env: env(fixed.url) });
    expect(rest.code).toBe(0);
    expect([...ndjson(r.stdout), ...ndjson(rest.stdout)].map((x) => x.username)).toEqual(expected(20));
  });

  it('after a failure, the resume carries what is left of --limit beside the records written, not beside those dropped', async () => {
    // Page 7 fails only once the pages after it have answered, so their records were counted.
    const failLate = (page: number, res: ServerResponse, answered: ReadonlySet<number>) => {
      if (page !== 7) return undefined;
      const deadline = Date.now() + 5000;
      const fail = () => {
        if ([8, 9, 10].some((p) => !answered.has(p)) && Date.now() < deadline) return void setTimeout(fail, 5);
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"message":"boom"}');
      };
      fail();
      return 'hold' as const;
    };
    const s = await pagedServer({ pages: 20, special: failLate });
    const r = await runSgq(['graph', 'followers', 'jack', '--all', '--parallel', '4', '--limit', '150', '--retries', '0'], { env: env(s.url) });
    expect(ndjson(r.stdout)).toHaveLength(60);
    expect(r.stderr).toContain('resume with: sgq graph followers jack --page 7 --all --parallel 4 --limit 90 ');
  });

  it('--limit is exact and asks no page it cannot write', async () => {
    const s = await pagedServer({ pages: 30, size: 100 });
    const r = await runSgq(['graph', 'followers', 'jack', '--all', '--parallel', '4', '--limit', '1234', '--summary', 'json'], { env: env(s.url) });
    expect(r.code).toBe(0);
    expect(ndjson(r.stdout).map((x) => x.username)).toEqual(expected(13, 100).slice(0, 1234));
    // 12 whole pages and the 34 records of a 13th: a 14th call would bring records thrown away.
    expect(s.asked.sort((a, b) => a - b)).toEqual(Array.from({ length: 13 }, (_, i) => i + 1));
    expect(summaryOf(r.stderr).totals.extra_calls).toBe(0);
  });

  it('--max-pages asks exactly that many pages', async () => {
    const s = await pagedServer({ pages: 30 });
    const r = await runSgq(['graph', 'followers', 'jack', '--all', '--parallel', '4', '--max-pages', '5'], { env: env(s.url) });
    expect(r.code).toBe(0);
    expect(ndjson(r.stdout).map((x) => x.username)).toEqual(expected(5));
    expect(s.asked.sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5]);
  });

  it('--max-credits is never passed, with the price learned from the balances', async () => {
    const s = await pagedServer({ pages: 30 });
    const r = await runSgq(['graph', 'followers', 'jack', '--all', '--parallel', '4', '--max-credits', '9'], { env: env(s.url) });
    expect(r.code).toBe(0);
    expect(s.asked.length).toBeLessThanOrEqual(9);
    expect(ndjson(r.stdout).map((x) => x.username)).toEqual(expected(s.asked.length));
  });

  it('is taken from the parallel setting, checked like the flag, and refused without --all', async () => {
    const s = await pagedServer({ pages: 12 });
    const r = await runSgq(['graph', 'followers', 'jack', '--all'], { env: { ...env(s.url), SGQ_PARALLEL: '4' } });
    expect(r.code).toBe(0);
    expect(ndjson(r.stdout)).toHaveLength(120);
    expect(s.stats().maxInFlight).toBeGreaterThan(1);
    const bad = await runSgq(['graph', 'followers', 'jack', '--all'], { env: { ...env(s.url), SGQ_PARALLEL: '0' } });
    expect(bad.code).toBe(3);
    expect(bad.stderr).toContain('invalid parallel "0"');
    const alone = await runSgq(['graph', 'followers', 'jack', '--parallel', '4'], { env: env(s.url) });
    expect(alone.code).toBe(2);
    expect(alone.stderr).toBe('sgq: --parallel only applies with --all; add --all: one page needs no parallel calls\n');
  });

  it('the library takes parallel per call and reports the extra calls', async () => {
    const s = await pagedServer({ pages: 9 });
    const sgq = createClient({ baseUrl: s.url, apiKey: 'k', env: { SGQ_CONFIG_DIR: tempDir() } });
    const records = sgq.graph.followers('jack', { parallel: 3 });
    expect((await records.toArray({ all: true })).map((x) => x.username)).toEqual(expected(9));
    expect(records.result).toMatchObject({ stoppedBy: 'done', pages: 9 });
    expect(records.result!.extraCalls).toBeGreaterThanOrEqual(s.asked.filter((p) => p > 9).length);
    expect(records.result!.extraCalls).toBeLessThanOrEqual(2);
    expect(s.stats().maxInFlight).toBeGreaterThan(1);
    await sgq.close();
  });
});
