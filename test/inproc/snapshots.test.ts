import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { readFileSync, statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ndjson, runSgq, tempDir, type RunOptions, serviceFolderIn } from '../helpers/run.js';
import { envelope, useStubs } from '../helpers/stub-server.js';

const stubs = useStubs();
const PAGE = 3;

/**
 * A followers route whose lists the test changes between runs; pages of 3 records, and
 * `fail` makes one page answer 500.
 */
async function followersService(lists: Record<string, (string | { username: string; [k: string]: unknown })[]>, fail?: { page: number }) {
  const stub = await stubs((req) => {
    const { user, page } = JSON.parse(req.body) as { user: string; page: number };
    if (fail && page === fail.page) return { status: 500, body: { message: 'boom' } };
    const all = (lists[user] ?? []).map((u) => (typeof u === 'string' ? { username: u, last_checked: '2026-11-01T00:00:00.000000+00:00' } : u));
    const data = all.slice((page - 1) * PAGE, page * PAGE);
    return { body: envelope(page, page * PAGE < all.length ? page + 1 : null, data, 1000 - page, user) };
  });
  return stub;
}

function setup(lists: Parameters<typeof followersService>[0], fail?: { page: number }) {
  const data = tempDir('sgq-data-');
  const config = tempDir();
  return followersService(lists, fail).then((stub) => ({
    stub,
    data,
    store: join(data, 'sgq', 'snapshots'),
    run: (argv: string[], options: RunOptions = {}) =>
      runSgq(argv, { ...options, env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k', XDG_DATA_HOME: data, SGQ_CONFIG_DIR: config, SGQ_RETRIES: '0', ...options.env } }),
  }));
}

const day = (d: number) => () => new Date(Date.UTC(2026, 10, d, 3, 15));
const userFolder = (store: string, user = 'jack', route = 'graph.get_followers') => join(serviceFolderIn(store), 'default', route, 'username', user);

describe('--snapshot and --changes', () => {
  it('prints no changes the first time and says so, then who was gained and lost; sgq diff agrees', async () => {
    const lists = { jack: ['amy', 'bob', 'cat', 'dan', 'eve'] };
    const s = await setup(lists);
    const first = await s.run(['graph', 'followers', 'jack', '--all', '--snapshot', '--changes'], { now: day(1) });
    expect(first.code).toBe(0);
    expect(first.stdout).toBe('');
    expect(first.stderr).toMatch(/jack: first snapshot \(5 records\); changes are printed from the next one/);

    lists.jack = ['bob', 'dan', 'eve', 'fay', 'amy2', 'gus', 'hal'];
    const second = await s.run(['graph', 'followers', 'jack', '--all', '--snapshot', '--changes'], { now: day(2) });
    expect(second.code).toBe(0);
    const changes = ndjson(second.stdout);
    expect(changes.filter((c) => c.change === 'gained').map((c) => c.username).sort()).toEqual(['amy2', 'fay', 'gus', 'hal']);
    expect(changes.filter((c) => c.change === 'lost').map((c) => c.username).sort()).toEqual(['amy', 'cat']);
    expect(changes[0]).toEqual({ change: changes[0]!.change, username: changes[0]!.username, last_checked: '2026-11-01T00:00:00.000000+00:00' });
    expect(second.stderr).toMatch(/jack: 4 gained, 2 lost, 3 unchanged since 2026-11-01T03:15:00.000Z/);

    const diff = await s.run(['diff', 'jack']);
    expect(diff.code).toBe(0);
    expect(ndjson(diff.stdout)).toEqual(changes);
    expect(diff.stderr).toMatch(/jack: 4 gained, 2 lost, 3 unchanged/);

    // Without --changes the whole list is printed as usual, and stored as well.
    const plain = await s.run(['graph', 'followers', 'jack', '--all', '--snapshot'], { now: day(3) });
    expect(ndjson(plain.stdout)).toHaveLength(7);
    const list = ndjson((await s.run(['snapshots', 'list'])).stdout);
    expect(list.map((x) => [x.user, x.taken_at, x.records, x.pages, x.complete])).toEqual([
      ['jack', '2026-11-01T03:15:00.000Z', 5, 2, true],
      ['jack', '2026-11-02T03:15:00.000Z', 7, 3, true],
      ['jack', '2026-11-03T03:15:00.000Z', 7, 3, true],
    ]);
    expect(list[1]!.credits_used).toBe(3);
    // `bytes`: what each snapshot takes on disk, its data file and its metadata file.
    for (const x of list) {
      const file = x.file as string;
      expect(x.bytes).toBe(statSync(file).size + statSync(file.replace(/\.ndjson\.gz$/, '.json')).size);
    }
    const table = (await s.run(['snapshots', 'list', '-o', 'table'])).stdout.split('\n');
    expect(table[0]).toMatch(/\bcomplete +bytes +file\b/);
    expect(table[1]).toContain(` ${list[0]!.bytes as number} `);
    // Stored as gzip NDJSON, sorted by username, exactly the records the service sent.
    const stored = gunzipSync(readFileSync(list[1]!.file as string)).toString().trim().split('\n');
    expect(stored.map((l) => JSON.parse(l).username)).toEqual(['amy2', 'bob', 'dan', 'eve', 'fay', 'gus', 'hal']);
    // As docs/churn.md promises: `zcat` reads every data file, to the records it holds.
    for (const x of list) {
      const zcat = spawnSync('zcat', [x.file as string], { encoding: 'utf8' });
      expect(zcat.status).toBe(0);
      expect(zcat.stdout).toBe(gunzipSync(readFileSync(x.file as string)).toString());
      expect(zcat.stdout.trim().split('\n')).toHaveLength(x.records as number);
    }
  });

  it('prints the changes in every format, with query_user for several users', async () => {
    const lists: Record<string, string[]> = { jack: ['a', 'b'], jill: ['x'] };
    const s = await setup(lists);
    expect((await s.run(['graph', 'followers', 'jack', 'jill', '--all', '--snapshot'], { now: day(1) })).code).toBe(0);
    lists.jack = ['b', 'c'];
    lists.jill = ['x', 'y,"z"'];
    const args = ['graph', 'followers', '-', '--all', '--snapshot', '--changes'];
    const nd = await s.run(args, { now: day(2), stdin: 'jack\njill\n' });
    expect(ndjson(nd.stdout).map((c) => [c.query_user, c.change, c.username]).sort()).toEqual([
      ['jack', 'gained', 'c'],
      ['jack', 'lost', 'a'],
      ['jill', 'gained', 'y,"z"'],
    ]);
    const csv = await s.run(['diff', 'jack', 'jill', '-o', 'csv', '--fields', 'query_user,change,username']);
    expect(csv.stdout.split('\r\n').filter(Boolean).sort()).toEqual(['jack,gained,c', 'jack,lost,a', 'jill,gained,"y,""z"""', 'query_user,change,username']);
    const json = JSON.parse((await s.run(['diff', 'jack', '-o', 'json'])).stdout) as { change: string }[];
    expect(json.map((c) => c.change).sort()).toEqual(['gained', 'lost']);
    const table = await s.run(['diff', 'jack', '-o', 'table']);
    expect(table.stdout).toMatch(/change[\s\S]*gained/);
  });

  it('never stores an export cut short by --limit, --max-pages, --max-credits or a failure, and says so', async () => {
    const lists = { jack: ['a', 'b', 'c', 'd', 'e', 'f', 'g'] };
    const s = await setup(lists);
    for (const extra of [['--limit', '4'], ['--max-pages', '2'], ['--max-credits', '1']]) {
      const r = await s.run(['graph', 'followers', 'jack', '--all', '--snapshot', ...extra]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/jack: not stored as a snapshot: it stopped at --(limit|max-pages|max-credits); only a complete export is kept/);
    }
    const failing = await setup(lists, { page: 2 });
    const failed = await failing.run(['graph', 'followers', 'jack', '--all', '--snapshot', '--changes']);
    expect(failed.code).toBe(7);
    expect(failed.stderr).toMatch(/jack: not stored as a snapshot: it failed/);
    for (const store of [s.store, failing.store]) {
      expect((await s.run(['snapshots', 'list', '--snapshot-dir', store])).stdout).toBe('');
      // Nothing half-written is left behind either.
      expect(readdirSync(userFolder(store))).toEqual([]);
    }
  });

  it('a run keeping snapshots or a dataset lets V8 grow its heaps to twice what they hold, and a plain run does not', async () => {
    const s = await setup({ jack: ['amy', 'bob'] });
    const asked = async (argv: string[]) => {
      const flags: string[] = [];
      const r = await s.run(argv, { setV8Flags: async (f) => void flags.push(f) });
      expect(r.code, r.stderr).toBe(0);
      return flags;
    };
    expect(await asked(['graph', 'followers', 'jack', '--all', '--snapshot'])).toContain('--heap-growing-percent=100');
    expect(await asked(['graph', 'followers', 'jack', '--all', '--dataset', tempDir()])).toContain('--heap-growing-percent=100');
    expect(await asked(['graph', 'followers', 'jack', '--all'])).not.toContain('--heap-growing-percent=100');
  });

  it('refuses flags that would make a snapshot something else than the whole list', async () => {
    const s = await setup({});
    for (const args of [['--snapshot'], ['--all', '--changes'], ['--all', '--snapshot', '--since', '7d'], ['--all', '--snapshot', '--since-last'], ['--all', '--snapshot', '--raw']]) {
      const r = await s.run(['graph', 'followers', 'jack', ...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/^sgq: /);
    }
    expect(s.stub.requests).toHaveLength(0);
  });
});

describe('sgq diff', () => {
  it('--changed reports records whose other fields changed; --at chooses the pair; --following the other relation', async () => {
    const lists: Record<string, (string | { username: string; n: number })[]> = { jack: [{ username: 'a', n: 1 }, { username: 'b', n: 1 }] };
    const s = await setup(lists);
    await s.run(['graph', 'followers', 'jack', '--all', '--snapshot'], { now: day(1) });
    lists.jack = [{ username: 'a', n: 2 }, { username: 'b', n: 1 }, { username: 'c', n: 1 }];
    await s.run(['graph', 'followers', 'jack', '--all', '--snapshot'], { now: day(2) });
    lists.jack = [{ username: 'c', n: 1 }];
    await s.run(['graph', 'followers', 'jack', '--all', '--snapshot'], { now: day(3) });

    const plain = await s.run(['diff', 'jack', '--at', '2026-11-02']);
    expect(ndjson(plain.stdout)).toEqual([{ change: 'gained', username: 'c', n: 1 }]);
    expect(plain.stderr).toMatch(/1 gained, 0 lost, 2 unchanged \(snapshot of 2026-11-01T03:15:00.000Z to snapshot of 2026-11-02T03:15:00.000Z\)/);
    const changed = await s.run(['diff', 'jack', '--at', '2026-11-02T12:00:00Z', '--changed']);
    expect(ndjson(changed.stdout)).toEqual([{ change: 'changed', username: 'a', n: 2 }, { change: 'gained', username: 'c', n: 1 }]);
    expect(changed.stderr).toMatch(/1 gained, 0 lost, 1 changed, 1 unchanged/);
    const latest = await s.run(['diff', 'jack']);
    expect(ndjson(latest.stdout).map((c) => [c.change, c.username])).toEqual([['lost', 'a'], ['lost', 'b']]);

    const early = await s.run(['diff', 'jack', '--at', '2026-11-01']);
    expect(early.code).toBe(2);
    expect(early.stderr).toMatch(/jack: only one snapshot of its followers up to 2026-11-01/);
    const following = await s.run(['diff', 'jack', '--following']);
    expect(following.code).toBe(2);
    expect(following.stderr).toMatch(/no snapshots of its following/);
    // --key another field: sorted on disk, same answer by n.
    const byN = await s.run(['diff', 'jack', '--key', 'n']);
    expect(ndjson(byN.stdout).map((c) => [c.change, c.n])).toEqual([['lost', 2]]);
  });

  it('compares two files: NDJSON, gzip NDJSON, CSV', async () => {
    const dir = tempDir();
    const s = await setup({});
    writeFileSync(join(dir, 'old.ndjson'), '{"username":"b","n":1}\n{"username":"a","n":1}\n');
    writeFileSync(join(dir, 'new.csv'), 'username,n\r\nc,1\r\nb,2\r\n');
    const r = await s.run(['diff', join(dir, 'old.ndjson'), join(dir, 'new.csv'), '--changed']);
    expect(r.code, r.stderr).toBe(0);
    expect(ndjson(r.stdout)).toEqual([
      { change: 'lost', username: 'a', n: 1 },
      { change: 'changed', username: 'b', n: '2' },
      { change: 'gained', username: 'c', n: '1' },
    ]);
    expect(r.stderr).toMatch(/1 gained, 1 lost, 1 changed, 0 unchanged/);
    const bad = await s.run(['diff', join(dir, 'old.ndjson'), join(dir, 'missing.ndjson')]);
    expect(bad.code).toBe(2);
    writeFileSync(join(dir, 'junk.ndjson'), 'hello\n');
    const junk = await s.run(['diff', join(dir, 'old.ndjson'), join(dir, 'junk.ndjson')]);
    expect(junk.code).toBe(2);
    expect(junk.stderr).toMatch(/^sgq: .*junk\.ndjson: not JSON/m);
  });

  it('never sees a snapshot whose metadata was not written; prune keeps the newest and removes what a crash left', async () => {
    const lists = { jack: ['a', 'b'] };
    const s = await setup(lists);
    for (let d = 1; d <= 3; d++) {
      lists.jack = [...lists.jack, `n${d}`];
      expect((await s.run(['graph', 'followers', 'jack', '--all', '--snapshot'], { now: day(d) })).code).toBe(0);
    }
    const folder = userFolder(s.store);
    // A crash between the data file's rename and its metadata, and a dead process's temporary file.
    writeFileSync(join(folder, '2026-11-04T03-15-00.000Z-abcdef.ndjson.gz'), 'not even gzip');
    writeFileSync(join(folder, '.tmp-999999999-0000.ndjson.gz'), 'half');
    const diff = await s.run(['diff', 'jack']);
    expect(ndjson(diff.stdout)).toEqual([{ change: 'gained', username: 'n3', last_checked: expect.any(String) }]);
    expect(ndjson((await s.run(['snapshots', 'list', 'jack'])).stdout)).toHaveLength(3);

    // A snapshot whose paging did not reach the end (as metadata from elsewhere could say): "lost" is "not seen".
    const metaFile = join(folder, readdirSync(folder).filter((n) => n.endsWith('.json')).sort()[1]!);
    writeFileSync(metaFile, readFileSync(metaFile, 'utf8').replace('"complete": true', '"complete": false'));
    expect((await s.run(['diff', 'jack'])).stderr).toMatch(/snapshot of 2026-11-02T03:15:00.000Z is not complete: "lost" there means "not seen"/);

    const prune = await s.run(['snapshots', 'prune', '--keep', '1']);
    expect(prune.code).toBe(0);
    expect(prune.stderr).toMatch(/removed 2 snapshots; kept the newest 1/);
    expect(readdirSync(folder).filter((n) => n !== '.last-snapshot').sort()).toEqual(['2026-11-03T03-15-00.000Z', '2026-11-03T03-15-00.000Z'].map((p, i) => expect.stringMatching(new RegExp(`^${p.replaceAll('.', '\\.')}-[0-9a-f]{6}\\.${i ? 'ndjson\\.gz' : 'json'}$`))));
    expect((await s.run(['diff', 'jack'])).stderr).toMatch(/only one snapshot/);
  });

  it('prune with users prunes only theirs, whatever their names, and reads no other user\'s folder', async () => {
    const users = ['jack', '.dot', 'a b/c', '中文😀'];
    const lists: Record<string, string[]> = Object.fromEntries(users.map((u) => [u, ['a']]));
    const s = await setup(lists);
    for (let d = 1; d <= 3; d++) {
      for (const u of users) lists[u] = [...lists[u]!, `n${d}`];
      expect((await s.run(['graph', 'followers', ...users, '--all', '--snapshot'], { now: day(d) })).code).toBe(0);
    }
    const kept = async () => Object.fromEntries(await Promise.all(users.map(async (u) => [u, ndjson((await s.run(['snapshots', 'list', u])).stdout).length] as const)));
    expect(await kept()).toEqual({ jack: 3, '.dot': 3, 'a b/c': 3, '中文😀': 3 });
    // Another user's folder holds a file no read can take (a link to itself): a prune that read it would fail.
    const loop = join(userFolder(s.store), '2026-11-09T03-15-00.000Z-aaaaaa.json');
    symlinkSync(loop, loop);
    const prune = await s.run(['snapshots', 'prune', '.dot', 'a b/c', '中文😀', '--keep', '1']);
    expect(prune.code, prune.stderr).toBe(0);
    expect(prune.stderr).toMatch(/removed 6 snapshots; kept the newest 1/);
    unlinkSync(loop);
    expect(await kept()).toEqual({ jack: 3, '.dot': 1, 'a b/c': 1, '中文😀': 1 });
  });

  it('--snapshot-dir and the snapshot-dir setting choose the store', async () => {
    const s = await setup({ jack: ['a'] });
    const dir = join(tempDir(), 'snaps');
    mkdirSync(dir);
    await s.run(['graph', 'followers', 'jack', '--all', '--snapshot', '--snapshot-dir', dir]);
    expect(readdirSync(userFolder(dir)).filter((n) => !n.startsWith('.')).length).toBe(2);
    const other = join(tempDir(), 'other');
    await s.run(['graph', 'followers', 'jack', '--all', '--snapshot'], { env: { SGQ_SNAPSHOT_DIR: other } });
    expect(ndjson((await s.run(['snapshots', 'list'], { env: { SGQ_SNAPSHOT_DIR: other } })).stdout)).toHaveLength(1);
    expect((await s.run(['snapshots', 'list'])).stderr).toMatch(/no snapshots in /);
  });
});

describe('what a cron mail shows of a batch of snapshots (issue 34)', () => {
  const users = Array.from({ length: 40 }, (_, i) => `user${i}`);

  it('the first snapshots of a batch are one line, not one a user; the next night prints the changes', async () => {
    const lists = Object.fromEntries(users.map((u) => [u, ['amy', 'bob']]));
    const s = await setup(lists);
    const first = await s.run(['graph', 'followers', '-', '--all', '--snapshot', '--changes'], { now: day(1), stdin: users.join('\n') });
    expect(first.code).toBe(0);
    expect(first.stderr).toContain('sgq: 40 first snapshots; changes are printed from the next run\n');
    expect(first.stderr).not.toContain('first snapshot (');
    // --quiet: that line is chatter.
    const quiet = await s.run(['graph', 'followers', 'new1', 'new2', '--all', '--snapshot', '--changes', '--quiet'], { now: day(1) });
    expect(quiet.code).toBe(0);
    expect(quiet.stderr).toBe('');
    lists.user3 = ['amy'];
    const second = await s.run(['graph', 'followers', '-', '--all', '--snapshot', '--changes', '--quiet'], { now: day(2), stdin: users.join('\n') });
    expect(second.code).toBe(0);
    expect(ndjson(second.stdout)).toEqual([{ query_user: 'user3', change: 'lost', username: 'bob', last_checked: '2026-11-01T00:00:00.000000+00:00' }]);
  });

  it('one first snapshot keeps its own line, its count agreeing with its noun', async () => {
    const s = await setup({ jack: ['amy'], bob: ['amy', 'cat'] });
    await s.run(['graph', 'followers', 'bob', '--all', '--snapshot'], { now: day(1) });
    const r = await s.run(['graph', 'followers', 'jack', 'bob', '--all', '--snapshot', '--changes'], { now: day(2) });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('sgq: jack: first snapshot (1 record); changes are printed from the next one\n');
    expect(r.stderr).toContain('sgq: bob: 0 gained, 0 lost, 2 unchanged since 2026-11-01T03:15:00.000Z\n');
    expect(r.stderr).not.toContain('first snapshots');
  });
});
