// `--confirm-lost N` (setting confirm-lost) on --snapshot --changes runs, night after night
// against a service whose list the test sets: a flicker is never reported, a loss is reported
// once, in the snapshot that confirms it, with when it was last seen, and a loss that comes back
// is a gain. `sgq diff` of two snapshots is unaffected, and the dataset's churn events are the
// changes printed.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { withDuckDb } from '../helpers/duckdb.js';
import { ndjson, runSgq, tempDir, type RunOptions } from '../helpers/run.js';
import { envelope, useStubs } from '../helpers/stub-server.js';

const stubs = useStubs();
const PAGE = 2;
const IDS: Record<string, number> = { amy: 1, bob: 2, cat: 3, dan: 4, dora: 4, eve: 5 };

/** A followers route serving `list.now` (usernames; ids from IDS, so dan and dora are one account). */
async function service(list: { now: string[] }) {
  return stubs((req) => {
    const { user, page } = JSON.parse(req.body) as { user: string; page: number };
    const all = list.now.map((username) => ({ username, userid: IDS[username], last_checked: '2026-11-01T00:00:00.000000+00:00' }));
    return { body: envelope(page, page * PAGE < all.length ? page + 1 : null, all.slice((page - 1) * PAGE, page * PAGE), 1000, user) };
  });
}

async function setup(list: { now: string[] }) {
  const stub = await service(list);
  const data = tempDir('sgq-data-');
  const config = tempDir();
  return (argv: string[], options: RunOptions = {}) => runSgq(argv, { ...options, env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k', XDG_DATA_HOME: data, SGQ_CONFIG_DIR: config, SGQ_RETRIES: '0', ...options.env } });
}

const night = (d: number) => () => new Date(Date.UTC(2026, 10, d, 3, 15));
const at = (d: number) => night(d)().toISOString();
const CHANGES = ['graph', 'followers', 'jack', '--all', '--snapshot', '--changes'];

/** The changes a night printed, as `change name` (with last_seen, renamed_from when set). */
const said = (stdout: string) =>
  ndjson(stdout).map((c) => [c.change, c.username, ...(c.renamed_from ? [`from ${c.renamed_from as string}`] : []), ...(c.last_seen ? [`last seen ${c.last_seen as string}`] : [])].join(' '));

describe('--confirm-lost N', () => {
  it('N = 2: a flicker is never reported, a loss once in the snapshot that confirms it, a return after it is a gain', async () => {
    const list = { now: ['amy', 'bob', 'cat', 'dan'] };
    const run = await setup(list);
    const dataset = tempDir('sgq-dataset-');
    const nightly = async (d: number, accounts: string[]) => {
      list.now = accounts;
      const r = await run([...CHANGES, '--confirm-lost', '2', '--dataset', dataset], { now: night(d) });
      expect(r.code, r.stderr).toBe(0);
      return { changes: said(r.stdout), stderr: r.stderr, records: ndjson(r.stdout) };
    };
    expect((await nightly(1, ['amy', 'bob', 'cat', 'dan'])).changes).toEqual([]);
    // bob missing (not yet lost), dan renamed dora (matched by id).
    const second = await nightly(2, ['amy', 'cat', 'dora']);
    expect(second.changes).toEqual(['renamed dora from dan']);
    expect(second.stderr).toContain('sgq: jack: 0 gained, 0 lost, 1 renamed, 2 unchanged since 2026-11-01T03:15:00.000Z; 1 missing, lost if still missing after 2 snapshots in a row (--confirm-lost)\n');
    // Every change carries last_seen (null unless lost), so CSV and Parquet have the column from the start.
    expect(second.records[0]).toHaveProperty('last_seen', null);
    // bob back: a flicker, never reported. cat missing.
    expect((await nightly(3, ['amy', 'bob', 'dora'])).changes).toEqual([]);
    // cat missing a second night: lost now, last seen on night 2.
    expect((await nightly(4, ['amy', 'bob', 'dora'])).changes).toEqual([`lost cat last seen ${at(2)}`]);
    // Reported once.
    expect((await nightly(5, ['amy', 'bob', 'dora'])).changes).toEqual([]);
    // cat back after its loss was confirmed: a gain.
    expect((await nightly(6, ['amy', 'bob', 'cat', 'dora'])).changes).toEqual(['gained cat']);

    // sgq diff of the last two stored snapshots is the plain diff, whatever --confirm-lost says.
    const diff = await run(['diff', 'jack', '--at', '2026-11-02']);
    expect(said(diff.stdout)).toEqual(['lost bob', 'renamed dora from dan']);

    // The dataset's churn events are the changes printed: cat lost once, then gained; bob never.
    const events = await withDuckDb(async (db) => {
      const read = await db.runAndReadAll(`SELECT change, username, last_seen FROM read_parquet('${join(dataset, 'changes')}/**/*.parquet', hive_partitioning = true, union_by_name = true) ORDER BY observed_at, username`);
      return read.getRowObjects().map((r) => [r.change, r.username, r.last_seen ?? null]);
    });
    expect(events).toEqual([
      ['renamed', 'dora', null],
      ['lost', 'cat', at(2)],
      ['gained', 'cat', null],
    ]);
  }, 60_000);

  it('sgq history counts a loss in the snapshot that confirms it, a flicker never, with or without --changes', async () => {
    const list = { now: ['amy', 'bob', 'cat'] };
    const run = await setup(list);
    const nights: [number, string[], string[]][] = [
      [1, ['amy', 'bob', 'cat'], []],
      [2, ['amy', 'cat'], ['--changes']],
      [3, ['amy', 'bob'], []],
      [4, ['amy', 'bob'], ['--changes']],
      [5, ['amy', 'bob', 'eve'], []],
    ];
    for (const [d, accounts, flags] of nights) {
      list.now = accounts;
      const r = await run(['graph', 'followers', 'jack', '--all', '--snapshot', '--confirm-lost', '2', ...flags], { now: night(d) });
      expect(r.code, r.stderr).toBe(0);
      // Counted only: a run without --changes says nothing of its changes.
      if (flags.length === 0) expect(r.stderr).not.toMatch(/gained|lost|missing/);
    }
    const history = await run(['history', 'jack', '-o', 'json']);
    expect(history.code, history.stderr).toBe(0);
    const rows = (JSON.parse(history.stdout) as { taken_at: string; count: number; gained: number | null; lost: number | null }[]).map((r) => [r.taken_at, r.count, r.gained, r.lost]);
    expect(rows).toEqual([
      [at(1), 3, null, null],
      // bob missing: not lost yet; back on night 3, never lost.
      [at(2), 2, 0, 0],
      // cat missing once: not yet.
      [at(3), 2, 0, 0],
      // cat missing twice: lost here.
      [at(4), 2, 0, 1],
      [at(5), 3, 1, 0],
    ]);
  }, 60_000);

  it('the setting confirm-lost (SGQ_CONFIRM_LOST) does what the flag does; the flag wins; the default 1 is the plain diff', async () => {
    const list = { now: ['amy', 'bob'] };
    const run = await setup(list);
    await run(CHANGES, { now: night(1) });
    list.now = ['amy'];
    const byDefault = await run(CHANGES, { now: night(2) });
    expect(said(byDefault.stdout)).toEqual(['lost bob']);
    expect(byDefault.stdout).not.toContain('last_seen');
    list.now = ['amy', 'bob'];
    expect(said((await run(CHANGES, { now: night(3) })).stdout)).toEqual(['gained bob']);
    list.now = ['amy'];
    const bySetting = await run(CHANGES, { now: night(4), env: { SGQ_CONFIRM_LOST: '2' } });
    expect(said(bySetting.stdout)).toEqual([]);
    const byFlag = await run([...CHANGES, '--confirm-lost', '1'], { now: night(5), env: { SGQ_CONFIRM_LOST: '3' } });
    // The flag's N = 1: against night 4 alone, where bob was already missing: nothing new.
    expect(said(byFlag.stdout)).toEqual([]);
    const bad = await run(CHANGES, { env: { SGQ_CONFIRM_LOST: '0' } });
    expect(bad.code).toBe(3);
    expect(bad.stderr).toMatch(/^sgq: invalid confirm-lost "0" \(from SGQ_CONFIRM_LOST\)/);
    const alone = await run(['graph', 'followers', 'jack', '--all', '--confirm-lost', '2']);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toMatch(/--confirm-lost needs --snapshot/);
  }, 60_000);
});
