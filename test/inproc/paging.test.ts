// Paging the service may get wrong: a next_page that points back or repeats, one named by an
// empty page, a page that repeats the one before (a service that ignores `page`), and a
// page_items that disagrees with data. Against stubs written from the spec's envelope, and
// against the sandbox's page-* faults, in-process.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lines, ndjson, runSgq, tempDir } from '../helpers/run.js';
import { useSandbox } from '../helpers/sandbox.js';
import { envelope, useStubs, type Recorded } from '../helpers/stub-server.js';

const stubs = useStubs();
const key = 'k';
const pageOf = (req: Recorded) => (JSON.parse(req.body) as { page: number }).page;
const records = (page: number, n = 2) => Array.from({ length: n }, (_, i) => ({ username: `p${page}r${i}` }));
const envOf = (url: string) => ({ SGQ_BASE_URL: url, SGQ_API_KEY: key });

describe('paging the service gets wrong, from stubs', () => {
  it.each([
    ['points back', 1, 'next_page 1 does not move past page 2'],
    ['repeats the page', 2, 'next_page 2 does not move past page 2'],
  ])('a next_page that %s ends the run at page 2 (exit 7) with page 1 written and a resume from page 2', async (_what, next, message) => {
    const stub = await stubs((req) => ({ body: pageOf(req) === 1 ? envelope(1, 2, records(1)) : envelope(2, next, records(2)) }));
    const r = await runSgq(['graph', 'followers', 'jack', '--all'], { env: envOf(stub.url) });
    expect(r.code).toBe(7);
    expect(ndjson(r.stdout)).toEqual(records(1));
    expect(stub.requests).toHaveLength(2);
    expect(r.stderr).toContain(`sgq: jack: page 2 failed: the service sent an unexpected body: ${message}`);
    expect(r.stderr).toContain('records before page 2 were written; resume with: sgq graph followers jack --page 2 --all\n');
  });

  it('an empty page that names a next page ends the run after it, not after endless billed calls', async () => {
    // Without the check this stub would be followed for ever: every page names the next.
    const stub = await stubs((req) => ({ body: envelope(pageOf(req), pageOf(req) + 1, pageOf(req) === 1 ? records(1) : []) }));
    const r = await runSgq(['graph', 'followers', 'jack', '--all'], { env: envOf(stub.url) });
    expect(r.code).toBe(7);
    expect(stub.requests).toHaveLength(2);
    expect(ndjson(r.stdout)).toEqual(records(1));
    expect(lines(r.stderr)[0]).toBe(
      'sgq: jack: page 2 failed: the service sent an unexpected body: page 2 holds no records but names page 3 as the next; rerun with --verbose or --raw to see it',
    );
    expect(r.stderr).toContain('resume with: sgq graph followers jack --page 2 --all\n');
  });

  it('an empty last page (next_page null) is the end of the list, not an error', async () => {
    const stub = await stubs((req) => ({ body: pageOf(req) === 1 ? envelope(1, 2, records(1)) : envelope(2, null, []) }));
    const r = await runSgq(['graph', 'followers', 'jack', '--all'], { env: envOf(stub.url) });
    expect(r.code).toBe(0);
    expect(ndjson(r.stdout)).toEqual(records(1));
  });

  it('a page that repeats the one before (the service ignores `page`) ends the run after two calls', async () => {
    const stub = await stubs((req) => ({ body: envelope(pageOf(req), pageOf(req) + 1, records(1)) }));
    const r = await runSgq(['graph', 'followers', 'jack', '--all'], { env: envOf(stub.url) });
    expect(r.code).toBe(7);
    expect(stub.requests).toHaveLength(2);
    expect(ndjson(r.stdout), 'the repeated records are not written twice').toEqual(records(1));
    expect(r.stderr).toContain('page 2 failed: the service sent an unexpected body: page 2 holds the same records as page 1: the service seems to ignore the page asked');
  });

  it('with --parallel 4 the same faults end the run within a bounded number of calls', async () => {
    for (const body of [(p: number) => envelope(p, p + 1, p === 1 ? records(1) : []), (p: number) => envelope(p, p + 1, records(1))]) {
      const stub = await stubs((req) => ({ body: body(pageOf(req)) }));
      const r = await runSgq(['graph', 'followers', 'jack', '--all', '--parallel', '4'], { env: envOf(stub.url) });
      expect(r.code).toBe(7);
      expect(ndjson(r.stdout)).toEqual(records(1));
      // Page 1 alone, then at most 4 pages asked at once before page 2's answer stops the run.
      expect(stub.requests.length).toBeLessThanOrEqual(5);
    }
  });

  it('a page_items that disagrees with data is one --verbose line a page, not an error', async () => {
    const stub = await stubs((req) => {
      const page = pageOf(req);
      return { body: { ...(envelope(page, page < 3 ? page + 1 : null, records(page)) as object), page_items: page === 2 ? 2 : 500 } };
    });
    const quiet = await runSgq(['graph', 'followers', 'jack', '--all'], { env: envOf(stub.url) });
    expect(quiet.code).toBe(0);
    expect(quiet.stderr).not.toContain('page_items');
    expect(ndjson(quiet.stdout)).toHaveLength(6);
    const verbose = await runSgq(['graph', 'followers', 'jack', '--all', '-v'], { env: envOf(stub.url) });
    expect(verbose.code).toBe(0);
    expect(lines(verbose.stderr).filter((l) => l.includes('page_items'))).toEqual([
      'sgq: jack: page 1: page_items says 500, data holds 2',
      'sgq: jack: page 3: page_items says 500, data holds 2',
    ]);
  });

  it('--max-credits counts the billed page whose paging was refused', async () => {
    // 10 credits a page; page 2 points back. Its call was billed, so the budget has 10 left, not 20.
    const stub = await stubs((req) => ({ body: pageOf(req) === 1 ? envelope(1, 2, records(1), 990) : envelope(2, 1, records(2), 980) }));
    const r = await runSgq(['graph', 'followers', 'jack', '--all', '--max-credits', '30', '--summary', 'json'], { env: envOf(stub.url) });
    expect(r.code).toBe(7);
    expect(r.stderr).toContain('resume with: sgq graph followers jack --page 2 --all --max-credits 10 --summary json\n');
    expect(r.stderr).toContain('"credits_used":20');
  });
});

describe('paging faults of the sandbox, and the run protocol', () => {
  const sb = useSandbox({ shape: 'spec', faults: { malformed: 'page-empty' } });
  const ignored = useSandbox({ shape: 'spec', faults: { malformed: 'page-ignored' } });
  const back = useSandbox({ faults: { malformed: 'page-back' } });

  it('page-back, in the service shape: exit 7 after page 2, page 1 written', async () => {
    const r = await runSgq(['graph', 'followers', 'bk_1200', '--all'], { env: back.env() });
    expect(r.code).toBe(7);
    expect(ndjson(r.stdout)).toHaveLength(500);
    expect(back.sandbox.calls.get('graph/get_followers')).toBe(2);
    expect(r.stderr).toContain('next_page 1 does not move past page 2');
  });

  it('--out keeps what was written as FILE.partial and leaves FILE alone; the resume appends to it', async () => {
    const out = join(tempDir(), 'jack.ndjson');
    const r = await runSgq(['graph', 'followers', 'em_1200', '--all', '--out', out], { env: sb.env() });
    expect(r.code).toBe(7);
    expect(existsSync(out)).toBe(false);
    expect(lines(readFileSync(`${out}.partial`, 'utf8'))).toHaveLength(500);
    expect(r.stderr).toContain(`resume with: sgq graph followers em_1200 --page 2 --all -o ndjson >> ${out}.partial`);
  });

  it('--snapshot of a run stopped this way is not committed', async () => {
    const env = { ...ignored.env(), SGQ_CONFIG_DIR: tempDir(), XDG_DATA_HOME: tempDir() };
    const r = await runSgq(['graph', 'followers', 'ig_1200', '--all', '--snapshot'], { env });
    expect(r.code).toBe(7);
    expect(ndjson(r.stdout)).toHaveLength(500);
    expect(r.stderr).toContain('page 2 holds the same records as page 1');
    const list = await runSgq(['snapshots', 'list'], { env });
    expect(list.code).toBe(0);
    expect(list.stdout).toBe('');
  });

  it('--cache does not keep the page it refused: a rerun asks for it again', async () => {
    const env = { ...ignored.env(), SGQ_CONFIG_DIR: tempDir(), XDG_CACHE_HOME: tempDir() };
    const before = ignored.sandbox.calls.get('graph/get_followers') ?? 0;
    for (let run = 1; run <= 2; run++) expect((await runSgq(['graph', 'followers', 'ca_1200', '--all', '--cache', '1h'], { env })).code).toBe(7);
    // Page 1 from the cache the second time; page 2 asked both times.
    expect((ignored.sandbox.calls.get('graph/get_followers') ?? 0) - before).toBe(3);
  });
});
