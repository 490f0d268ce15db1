import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { ndjson, runSgq, serviceFolderIn, tempDir, type RunOptions } from '../helpers/run.js';
import { envelope, useStubs } from '../helpers/stub-server.js';
import { churningNights, writeNights } from '../helpers/snapshot-nights.js';
import { waitFor } from '../helpers/wait.js';

// `sgq history` over snapshots taken on different nights of a stub service whose lists change
// from night to night: the records, every format, the period, the counts kept in each
// snapshot's metadata (and counted once for a store of an older sgq), the dataset, the page.

const stubs = useStubs();
const PAGE = 3;

type Follower = { id: number; name: string; bio?: string; followers?: number };
const record = (f: Follower) => ({ follower_username: f.name, follower_userid: f.id, follower_list_name: `Name of ${f.name}`, follower_bio: f.bio ?? `bio of ${f.name}`, follower_num_followers: f.followers ?? f.id * 10 });

/** A followers (and following) route serving `lists[user]` as they are at the time of the request, in pages of 3. */
async function setup(lists: Record<string, Follower[]>) {
  const stub = await stubs((req) => {
    const { user, page } = JSON.parse(req.body) as { user: string; page: number };
    const all = (lists[user] ?? []).map(record);
    return { body: envelope(page, page * PAGE < all.length ? page + 1 : null, all.slice((page - 1) * PAGE, page * PAGE), 1000 - page, user) };
  });
  const data = tempDir('sgq-data-');
  const config = tempDir();
  return {
    data,
    store: join(data, 'sgq', 'snapshots'),
    run: (argv: string[], options: RunOptions = {}) =>
      runSgq(argv, { ...options, env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k', XDG_DATA_HOME: data, SGQ_CONFIG_DIR: config, SGQ_RETRIES: '0', ...options.env } }),
  };
}

const night = (d: number) => () => new Date(Date.UTC(2026, 10, d, 3, 15));
const at = (d: number) => night(d)().toISOString();
const people = (...ids: number[]): Follower[] => ids.map((id) => ({ id, name: `u${id}` }));

/** Four nights of jack's followers: the first has 5, then 2 came and 1 left, then nobody moved, then 1 came and 3 left. */
async function fourNights(options: { changes?: (night: number) => boolean; dataset?: string } = {}) {
  const lists: Record<string, Follower[]> = { jack: people(1, 2, 3, 4, 5) };
  const s = await setup(lists);
  const nights = [people(1, 2, 3, 4, 5), people(1, 2, 3, 5, 6, 7), people(1, 2, 3, 5, 6, 7), people(2, 6, 7, 8)];
  for (const [i, list] of nights.entries()) {
    lists.jack = list;
    const extra = [...(options.changes?.(i + 1) ? ['--changes'] : []), ...(options.dataset ? ['--dataset', options.dataset] : [])];
    const r = await s.run(['graph', 'followers', 'jack', '--all', '--snapshot', ...extra], { now: night(i + 1) });
    expect(r.code, r.stderr).toBe(0);
  }
  return s;
}

const EXPECTED = [
  { user: 'jack', route: 'graph/get_followers', taken_at: at(1), count: 5, count_is_upper_bound: false, gained: null, lost: null },
  { user: 'jack', route: 'graph/get_followers', taken_at: at(2), count: 6, count_is_upper_bound: false, gained: 2, lost: 1 },
  { user: 'jack', route: 'graph/get_followers', taken_at: at(3), count: 6, count_is_upper_bound: false, gained: 0, lost: 0 },
  { user: 'jack', route: 'graph/get_followers', taken_at: at(4), count: 4, count_is_upper_bound: false, gained: 1, lost: 3 },
];

const metaFiles = (store: string, user = 'jack') => {
  const folder = join(serviceFolderIn(store), 'default', 'graph.get_followers', 'username', user);
  return readdirSync(folder)
    .filter((n) => n.endsWith('.json') && !n.startsWith('.'))
    .sort()
    .map((n) => join(folder, n));
};

describe('sgq history: the records', () => {
  it('prints one record per snapshot, oldest first, with nulls for the first; the counts agree with --changes and sgq diff', async () => {
    // Counted with --changes on night 2, without it on nights 3 and 4: the same numbers either way.
    const s = await fourNights({ changes: (n) => n === 2 });
    const history = await s.run(['history', 'jack', '-o', 'json']);
    expect(history.code, history.stderr).toBe(0);
    expect(JSON.parse(history.stdout)).toEqual(EXPECTED);
    const diff = await s.run(['diff', 'jack']);
    expect(diff.stderr).toMatch(/jack: 1 gained, 3 lost, 0 renamed, 3 unchanged/);
  });

  it('keeps the counts in each snapshot metadata as it commits, with or without --changes', async () => {
    const s = await fourNights({ changes: (n) => n === 3 });
    const counts = metaFiles(s.store).map((f) => (JSON.parse(readFileSync(f, 'utf8')) as { counts?: unknown }).counts);
    expect(counts[0]).toEqual({ previous: null, gained: null, lost: null, renamed: null });
    expect(counts.slice(1).map((c) => [(c as { gained: number }).gained, (c as { lost: number }).lost])).toEqual([[2, 1], [0, 0], [1, 3]]);
    // Read from the metadata alone: data files that can no longer be read change nothing.
    for (const file of metaFiles(s.store)) writeFileSync(file.replace(/\.json$/, '.ndjson.gz'), 'not gzip');
    const r = await s.run(['history', 'jack', '-o', 'json']);
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual(EXPECTED);
  });

  it('counts a store of an older sgq once, keeps the counts (0600, through the commit rule) and reads them after', async () => {
    const s = await fourNights();
    const files = metaFiles(s.store);
    for (const file of files) {
      const { counts: _dropped, ...meta } = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
      writeFileSync(file, JSON.stringify(meta));
    }
    const first = await s.run(['history', 'jack', '-o', 'json']);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toEqual(EXPECTED);
    for (const file of files) {
      expect((JSON.parse(readFileSync(file, 'utf8')) as { counts?: unknown }).counts).toBeDefined();
      expect(statSync(file).mode & 0o777).toBe(0o600);
    }
    // No temporary file left beside them.
    expect(readdirSync(join(files[0]!, '..')).filter((n) => n.includes('.tmp'))).toEqual([]);
    const times = files.map((f) => statSync(f).mtimeMs);
    expect(JSON.parse((await s.run(['history', 'jack', '-o', 'json'])).stdout)).toEqual(EXPECTED);
    expect(files.map((f) => statSync(f).mtimeMs)).toEqual(times);
  });

  it('says which snapshot of an older store cannot be counted, prints nulls for it, and counts it next time', async () => {
    const s = await fourNights();
    const files = metaFiles(s.store);
    for (const file of files) {
      const { counts: _dropped, ...meta } = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
      writeFileSync(file, JSON.stringify(meta));
    }
    const third = files[2]!.replace(/\.json$/, '.ndjson.gz');
    const kept = readFileSync(third);
    writeFileSync(third, 'not gzip');
    const r = await s.run(['history', 'jack', '-o', 'json']);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(new RegExp(`jack: the snapshot of ${at(3)} cannot be compared with the one before \\(.*\\): its gained and lost are null`));
    expect(JSON.parse(r.stdout)).toEqual([EXPECTED[0], EXPECTED[1], { ...EXPECTED[2], gained: null, lost: null }, { ...EXPECTED[3], gained: null, lost: null }]);
    writeFileSync(third, kept);
    const again = await s.run(['history', 'jack', '-o', 'json']);
    expect(again.stderr).toBe('');
    expect(JSON.parse(again.stdout)).toEqual(EXPECTED);
  });

  it('stopped by Ctrl-C while it counts an older store: exit 130, and the snapshots it counted keep their counts', async () => {
    const store = tempDir('sgq-store-');
    const folder = writeNights(store, 'jack', churningNights(100, 2000));
    const metas = readdirSync(folder).filter((n) => n.endsWith('.json')).map((n) => join(folder, n));
    const counted = () => metas.filter((f) => (JSON.parse(readFileSync(f, 'utf8')) as { counts?: unknown }).counts !== undefined).length;
    const stop = new AbortController();
    const args = ['--sandbox', 'history', 'jack', '--snapshot-dir', store, '-o', 'json'];
    const running = runSgq(args, { signal: stop.signal });
    await waitFor(() => counted() > 1, 'the first counts kept', 60_000);
    stop.abort('SIGINT');
    const r = await running;
    expect(r.code, r.stderr).toBe(130);
    const kept = counted();
    expect(kept).toBeGreaterThan(1);
    expect(kept).toBeLessThan(metas.length);
    const again = await runSgq(args);
    expect(again.code, again.stderr).toBe(0);
    expect(counted()).toBe(metas.length);
    const records = JSON.parse(again.stdout) as { count: number; gained: number | null; lost: number | null }[];
    // Each count follows from the one before it: what was kept before the stop is right.
    for (let i = 1; i < records.length; i++) expect(records[i]!.count).toBe(records[i - 1]!.count + records[i]!.gained! - records[i]!.lost!);
  });

  it('keeps the counts of the oldest snapshot left after a prune; the oldest of an older store, pruned, has nulls', async () => {
    const s = await fourNights();
    expect((await s.run(['snapshots', 'prune', '--keep', '2'])).code).toBe(0);
    expect(JSON.parse((await s.run(['history', 'jack', '-o', 'json'])).stdout)).toEqual(EXPECTED.slice(2));
    for (const file of metaFiles(s.store)) {
      const { counts: _dropped, ...meta } = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
      writeFileSync(file, JSON.stringify(meta));
    }
    // The one before it is gone: nothing to count it against.
    expect(JSON.parse((await s.run(['history', 'jack', '-o', 'json'])).stdout)).toEqual([{ ...EXPECTED[2], gained: null, lost: null }, EXPECTED[3]]);
  });

  it('bounds the period with --since and --until (a date alone means its end), inclusive', async () => {
    const s = await fourNights();
    const between = await s.run(['history', 'jack', '--since', '2026-11-02', '--until', '2026-11-03', '-o', 'json']);
    expect(JSON.parse(between.stdout)).toEqual(EXPECTED.slice(1, 3));
    const since = await s.run(['history', 'jack', '--since', at(4), '-o', 'json']);
    expect(JSON.parse(since.stdout)).toEqual(EXPECTED.slice(3));
    const age = await s.run(['history', 'jack', '--since', '30h', '-o', 'json'], { now: () => new Date(Date.UTC(2026, 10, 4, 12)) });
    expect(JSON.parse(age.stdout)).toEqual(EXPECTED.slice(3));
    const none = await s.run(['history', 'jack', '--until', '2026-10-01']);
    expect(none.code).toBe(0);
    expect(none.stdout).toBe('');
    expect(none.stderr).toMatch(/jack: no snapshot up to 2026-10-01T23:59:59.999Z/);
    const backwards = await s.run(['history', 'jack', '--since', '2026-11-03', '--until', '2026-11-02']);
    expect(backwards.code).toBe(2);
    expect(backwards.stderr).toMatch(/--since 2026-11-03 is after --until 2026-11-02/);
    const bad = await s.run(['history', 'jack', '--since', 'yesterday']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/invalid --since "yesterday"/);
  });

  it('prints the records in every format, through the shared formatters', async () => {
    const s = await fourNights();
    const csv = await s.run(['history', 'jack', '-o', 'csv']);
    // CSV lines end in CRLF (RFC 4180).
    expect(csv.stdout.split('\r\n').slice(0, 3)).toEqual(['user,route,taken_at,count,count_is_upper_bound,gained,lost', `jack,graph/get_followers,${at(1)},5,false,,`, `jack,graph/get_followers,${at(2)},6,false,2,1`]);
    const tsv = await s.run(['history', 'jack', '-o', 'tsv']);
    expect(tsv.stdout.split(/\r?\n/)[4]).toBe(`jack\tgraph/get_followers\t${at(4)}\t4\tfalse\t1\t3`);
    expect(ndjson((await s.run(['history', 'jack'])).stdout)).toEqual(EXPECTED);
    expect(parseYaml((await s.run(['history', 'jack', '-o', 'yaml'])).stdout)).toEqual(EXPECTED);
    const fields = await s.run(['history', 'jack', '--fields', 'taken_at,count', '-o', 'csv']);
    expect(fields.stdout.split('\r\n')[1]).toBe(`${at(1)},5`);
    const table = await s.run(['history', 'jack', '-o', 'table']);
    expect(table.stdout).toMatch(/taken_at/);
    expect(table.stdout.split('\n').filter((l) => l.includes('jack'))).toHaveLength(4);
    const out = join(tempDir(), 'h.json');
    expect((await s.run(['history', 'jack', '--out', out])).code).toBe(0);
    expect(JSON.parse(readFileSync(out, 'utf8'))).toEqual(EXPECTED);
  });

  it('names each user and list: several users, --following, --how; a user with no snapshots is exit 2 and the others are printed', async () => {
    const lists: Record<string, Follower[]> = { jack: people(1, 2), amy: people(3) };
    const s = await setup(lists);
    for (const [d, list] of [[1, people(1, 2)], [2, people(2, 9)]] as const) {
      lists.jack = [...list];
      await s.run(['graph', 'followers', 'jack', 'amy', '--all', '--snapshot'], { now: night(d) });
      await s.run(['graph', 'following', 'jack', '--all', '--snapshot'], { now: night(d) });
      await s.run(['graph', 'followers', '42', '--how', 'userid', '--all', '--snapshot'], { now: night(d) });
    }
    const both = await s.run(['history', 'jack', 'nobody', 'amy', '-o', 'json']);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/nobody: no snapshots of its followers in .* \(profile default\); take one with `sgq graph followers nobody --all --snapshot`/);
    expect((JSON.parse(both.stdout) as { user: string; gained: number | null }[]).map((r) => [r.user, r.gained])).toEqual([['jack', null], ['jack', 1], ['amy', null], ['amy', 0]]);
    const following = JSON.parse((await s.run(['history', 'jack', '--following', '-o', 'json'])).stdout) as { route: string; lost: number | null }[];
    expect(following.map((r) => [r.route, r.lost])).toEqual([['graph/get_following', null], ['graph/get_following', 1]]);
    expect(JSON.parse((await s.run(['history', '42', '--how', 'userid', '-o', 'json'])).stdout)).toHaveLength(2);
    expect((await s.run(['history', '42'])).code).toBe(2);
    expect(ndjson((await s.run(['history', '-'], { stdin: 'amy\n' })).stdout)).toHaveLength(2);
  });
});

describe('sgq history --dataset', () => {
  it("reads the dataset's runs: the same numbers as the store", async () => {
    const dataset = join(tempDir(), 'ds');
    const s = await fourNights({ dataset, changes: (n) => n === 2 });
    const r = await s.run(['history', 'jack', '--dataset', dataset, '-o', 'json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(EXPECTED);
    const between = await s.run(['history', 'jack', '--dataset', dataset, '--since', '2026-11-02', '--until', '2026-11-03', '-o', 'json']);
    expect(JSON.parse(between.stdout)).toEqual(EXPECTED.slice(1, 3));
    // The page from the dataset: its data equal to the records, who came and who left from the runs' records.
    const file = join(tempDir(), 'dataset.html');
    expect((await s.run(['history', 'jack', '--dataset', dataset, '--html', file])).code).toBe(0);
    const html = readFileSync(file, 'utf8');
    expect(JSON.parse(/id="sgq-history">([^<]*)</.exec(html)![1]!)).toEqual(EXPECTED);
    const night4 = html.slice(html.indexOf('2026-11-04 03:15'), html.indexOf('2026-11-03 03:15'));
    expect(night4).toMatch(/\+1 came.*−3 left/);
    for (const gone of ['@u1', '@u3', '@u5']) expect(night4).toContain(gone);
    expect(night4).toContain('@u8');
    expect(night4).toContain('Name of u8');
    const nobody = await s.run(['history', 'amy', '--dataset', dataset]);
    expect(nobody.code).toBe(2);
    expect(nobody.stderr).toMatch(/amy: no run of its followers in the dataset/);
  });

  it('refuses --how and --snapshot-dir with --dataset, and a folder that is not there', async () => {
    const s = await setup({});
    const how = await s.run(['history', 'jack', '--dataset', tempDir(), '--how', 'userid']);
    expect(how.code).toBe(2);
    expect(how.stderr).toMatch(/--how does not apply to --dataset/);
    expect((await s.run(['history', 'jack', '--dataset', tempDir(), '--snapshot-dir', tempDir()])).code).toBe(2);
    const missing = await s.run(['history', 'jack', '--dataset', join(tempDir(), 'none')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/no dataset in .*none/);
  });
});

describe('sgq history on a terminal', () => {
  it('draws a chart to the width of the terminal unless -o is given', async () => {
    const s = await fourNights();
    const stdout = Object.assign(new PassThrough(), { columns: 60 });
    const chart = await s.run(['history', 'jack'], { stdoutIsTTY: true, stdout, env: { NO_COLOR: '1' } });
    expect(chart.code).toBe(0);
    const lines = chart.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('jack, followers: 4 snapshots from 2026-11-01 to 2026-11-04');
    for (const line of lines) expect([...line].length).toBeLessThanOrEqual(60);
    expect(lines.some((l) => /^ +6 ┤/.test(l))).toBe(true);
    expect(lines.some((l) => /^ +4 ┤/.test(l))).toBe(true);
    expect(lines.at(-1)).toBe('last 4 (+1 -3) at 2026-11-04 03:15 UTC; in all +3 -4');
    const records = await s.run(['history', 'jack', '-o', 'ndjson'], { stdoutIsTTY: true, stdout: Object.assign(new PassThrough(), { columns: 60 }) });
    expect(ndjson(records.stdout)).toEqual(EXPECTED);
  });
});

describe('sgq history --html', () => {
  it('writes one page: the numbers as JSON equal to -o json, the lists newest first, every name and bio escaped', async () => {
    const hostile = '</script><script>alert(1)</script><!-- & "x"';
    const lists: Record<string, Follower[]> = { jack: [] };
    const s = await setup(lists);
    const nights = [people(1, 2, 3), [...people(1, 3), { id: 4, name: 'mallory', bio: hostile, followers: 1234567 }], people(1, 4)];
    for (const [i, list] of nights.entries()) {
      lists.jack = list;
      expect((await s.run(['graph', 'followers', 'jack', '--all', '--snapshot'], { now: night(i + 1) })).code).toBe(0);
    }
    const file = join(tempDir(), 'history.html');
    const page = await s.run(['history', 'jack', '--html', file]);
    expect(page.code, page.stderr).toBe(0);
    expect(page.stdout).toBe('');
    expect(page.stderr).toMatch(/wrote .*history\.html: 3 snapshots of jack/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const html = readFileSync(file, 'utf8');
    const json = (await s.run(['history', 'jack', '-o', 'json'])).stdout;
    const block = /<script type="application\/json" id="sgq-history">([^<]*)<\/script>/.exec(html);
    expect(block, 'the data block').not.toBeNull();
    expect(JSON.parse(block![1]!)).toEqual(JSON.parse(json));
    // The hostile bio is text: never a tag, and the one script element that ends is each script's own.
    expect(html).not.toContain('<script>alert(1)');
    expect(html).toContain('&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;!-- &amp; &quot;x&quot;');
    expect(html.match(/<script/g)).toHaveLength(3);
    // Newest first: night 3 (mallory stays, 3 left) before night 2 (mallory came, 2 left).
    const summaries = [...html.matchAll(/<summary>([^<]*)/g)].map((m) => m[1]);
    expect(summaries).toEqual(['2026-11-03 03:15 UTC: ', '2026-11-02 03:15 UTC: ']);
    expect(html.indexOf('@u3')).toBeGreaterThan(html.indexOf('2026-11-03 03:15'));
    expect(html).toContain('1,234,567');
    // Nothing to fetch: no address in a src or href, and a policy that allows none.
    expect(html).not.toMatch(/\b(src|href)=/i);
    expect(html).toContain("default-src 'none'");
    expect(Buffer.byteLength(html)).toBeLessThan(1024 * 1024);
  });

  it('escapes < in the data block: a user name cannot close its script element', async () => {
    const s = await setup({ '</script>x': people(1) });
    expect((await s.run(['graph', 'followers', '</script>x', '--all', '--snapshot'], { now: night(1) })).code).toBe(0);
    const file = join(tempDir(), 'page.html');
    expect((await s.run(['history', '</script>x', '--html', file])).code).toBe(0);
    const html = readFileSync(file, 'utf8');
    const block = /id="sgq-history">([^<]*)<\/script>/.exec(html)!;
    expect(block[1]).toContain('\\u003c/script\\u003ex');
    expect(JSON.parse(block[1]!)[0].user).toBe('</script>x');
  });

  it('takes no -o, --fields or --out beside it', async () => {
    const s = await setup({});
    const r = await s.run(['history', 'jack', '--html', join(tempDir(), 'x.html'), '-o', 'json']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--html writes a page, not records/);
  });
});
