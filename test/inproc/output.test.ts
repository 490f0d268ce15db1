import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lines, ndjson, runSgq, tempDir } from '../helpers/run.js';
import { recordFields, useSandbox } from '../helpers/sandbox.js';

const sb = useSandbox();

describe('output formats', () => {
  it('defaults to ndjson when stdout is not a terminal, table when it is', async () => {
    const piped = await runSgq(['metadata', 'userid', 'jack'], { env: sb.env() });
    expect(JSON.parse(piped.stdout)).toMatchObject({ username: 'jack' });
    const tty = await runSgq(['metadata', 'userid', 'jack'], { env: sb.env(), stdoutIsTTY: true });
    expect(tty.stdout).toMatch(/^username\s+userid\njack\s+\d+\n$/);
  });

  it('json is one array of every record across pages', async () => {
    const r = await runSgq(['graph', 'followers', 'big_1200', '--all', '-o', 'json'], { env: sb.env() });
    const records = JSON.parse(r.stdout) as unknown[];
    expect(records).toHaveLength(1200);
  });

  it('csv has a header from the record keys and one row per record', async () => {
    const r = await runSgq(['graph', 'followers', 'big_700', '--all', '-o', 'csv'], { env: sb.env() });
    const rows = r.stdout.split('\r\n').filter(Boolean);
    expect(rows[0]).toBe(recordFields(sb.shape).join(','));
    expect(rows).toHaveLength(701);
  });

  it('--fields selects and orders columns', async () => {
    const r = await runSgq(['graph', 'followers', 'jack', '--fields', `${sb.checked()},${sb.name()}`, '--limit', '2'], { env: sb.env() });
    for (const rec of ndjson(r.stdout)) expect(Object.keys(rec)).toEqual([sb.checked(), sb.name()]);
  });

  it('--raw prints each body as received, one per line, envelope included', async () => {
    const r = await runSgq(['graph', 'followers', 'big_1200', '--all', '--raw'], { env: sb.env() });
    const bodies = lines(r.stdout).map((l) => JSON.parse(l) as { page: number; data: unknown[] });
    expect(bodies.map((b) => b.page)).toEqual([1, 2, 3]);
    expect(bodies[2]!.data).toHaveLength(200);
  });

  it('keeps the sandbox 19-digit ids as strings', async () => {
    const r = await runSgq(['metadata', 'userid', 'jack'], { env: sb.env() });
    expect(r.stdout).toMatch(/"user_id":"\d{19}"/);
  });
});

describe('stderr', () => {
  it('a pipe gets no summary, no spinner and no escape codes', async () => {
    const r = await runSgq(['graph', 'followers', 'jack', '--all'], { env: sb.env() });
    expect(r.stderr).toBe('');
  });

  it('--verbose adds traces and the summary, without the key', async () => {
    const r = await runSgq(['graph', 'followers', 'big_1000', '--all', '-v'], { env: sb.env() });
    expect(r.stderr).toContain('POST http://127.0.0.1');
    expect(r.stderr).toContain('2 pages, 1,000 records, 6 credits used');
    expect(r.stderr).toMatch(/credits left/);
    expect(r.stderr).not.toContain('sgq-demo-key');
    expect(r.stderr).not.toMatch(/\u001b\[/);
  });

  it('a terminal gets the summary; --quiet leaves stderr empty', async () => {
    const tty = await runSgq(['graph', 'followers', 'big_10'], { env: { ...sb.env(), NO_COLOR: '1' }, stderrIsTTY: true });
    expect(tty.stderr).toContain('1 page, 10 records');
    const quiet = await runSgq(['graph', 'followers', 'big_10', '-q'], { env: sb.env(), stderrIsTTY: true });
    expect(quiet.stderr).toBe('');
  });

  it('NO_COLOR turns colour off on a terminal; FORCE_COLOR turns it on in a pipe', async () => {
    const plain = await runSgq(['graph', 'followers', 'nobody'], { env: { ...sb.env(), NO_COLOR: '1' }, stderrIsTTY: true });
    expect(plain.stderr).not.toMatch(/\u001b\[/);
    const forced = await runSgq(['graph', 'followers', 'nobody'], { env: { ...sb.env(), FORCE_COLOR: '1' } });
    expect(forced.stderr).toMatch(/\u001b\[/);
  });
});

describe('--out FILE', () => {
  it('appears only when the run succeeds', async () => {
    const dir = tempDir();
    const file = join(dir, 'followers.ndjson');
    const r = await runSgq(['graph', 'followers', 'big_1200', '--all', '--out', file], { env: sb.env() });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(lines(readFileSync(file, 'utf8'))).toHaveLength(1200);
  });

  it('keeps the old file on failure and saves what was fetched as FILE.partial', async () => {
    const dir = tempDir();
    const file = join(dir, 'followers.ndjson');
    writeFileSync(file, 'old contents\n');
    const r = await runSgq(['graph', 'followers', 'big_30000', '--all', '--out', file], { env: { ...sb.env(), SGQ_API_KEY: 'sgq-low-key' } });
    expect(r.code).toBe(5);
    expect(readFileSync(file, 'utf8')).toBe('old contents\n');
    // The low key's 20 credits pay for 6 pages at 3 credits.
    expect(lines(readFileSync(`${file}.partial`, 'utf8'))).toHaveLength(6 * 500);
    expect(r.stderr).toContain(`${file}.partial`);
  });

  it('rejects a folder that does not exist before any request (exit 2)', async () => {
    const r = await runSgq(['graph', 'followers', 'jack', '--out', '/nonexistent/dir/x.ndjson'], { env: sb.env() });
    expect(r.code).toBe(2);
    expect(existsSync('/nonexistent/dir/x.ndjson')).toBe(false);
  });
});

describe('every route on the sandbox', () => {
  it.each([
    [['graph', 'followers', 'jack'], sb.checked('followers')],
    [['graph', 'following', 'jack'], sb.checked('following')],
    [['alpha', 'score-history', 'jack'], 'score'],
    [['metadata', 'history', 'jack'], 'followers_count'],
    [['metadata', 'tweets', 'jack'], 'like_count'],
    [['metadata', 'latest-tweets', 'jack'], 'created_at'],
    [['metadata', 'userid', 'jack'], 'user_id'],
    [['info'], 'service'],
  ])('%j prints records', async (argv, field) => {
    const r = await runSgq(argv, { env: sb.env() });
    expect(r.code).toBe(0);
    expect(ndjson(r.stdout)[0]).toHaveProperty(field);
  });

  it('latest-tweets costs 6 credits a call', async () => {
    const r = await runSgq(['metadata', 'latest-tweets', 'jack', 'dorsey', '-v'], { env: sb.env() });
    expect(r.stderr).toContain('12 credits used');
  });

  it('userid works with no key configured', async () => {
    const r = await runSgq(['metadata', 'userid', 'jack'], { env: { SGQ_BASE_URL: sb.sandbox.url } });
    expect(r.code).toBe(0);
  });

  it('the sandbox applies since: fewer followers for a later date', async () => {
    const all = ndjson((await runSgq(['graph', 'followers', 'big_400'], { env: sb.env() })).stdout);
    const cutoff = all[99]![sb.checked()] as string;
    const since = ndjson((await runSgq(['graph', 'followers', 'big_400', '--since', cutoff], { env: sb.env() })).stdout);
    expect(since).toHaveLength(100);
    expect(since.every((r) => (r[sb.checked()] as string) >= cutoff)).toBe(true);
  });
});
