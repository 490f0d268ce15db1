import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { sgq } from '../helpers/e2e.js';
import { tempDir, serviceFolderIn } from '../helpers/run.js';
import { envelope, useStubs } from '../helpers/stub-server.js';

// Churn compares accounts, not strings, on the three record shapes: the service's prefixed
// follower records, its unprefixed following records, and the spec's plain example.

const stubs = useStubs();
const BIG = '18446744073709551617'; // past 2^64: as a JS number it would end in 552000
const NEAR = ['9007199254740992', '9007199254740993']; // one double for two ids

type Account = { name: string; id: string; bio?: string };
/** A record of each shape, written as text so that the ids are bare integers of any size. */
const shapes = {
  followers: (a: Account) => `{"follower_username":${JSON.stringify(a.name)},"follower_userid":${a.id},"follower_bio":${JSON.stringify(a.bio ?? 'hi\tthere')},"follower_num_followers":12,"follower_last_checked":"2026-11-01T00:00:00+00:00"}`,
  following: (a: Account) => `{"username":${JSON.stringify(a.name)},"userid":${a.id},"bio":${JSON.stringify(a.bio ?? 'x')},"last_checked":"2026-11-01T00:00:00+00:00"}`,
  plain: (a: Account) => `{"username":${JSON.stringify(a.name)},"last_checked":"2026-11-01T00:00:00.000000+00:00"}`,
};
type Shape = keyof typeof shapes;

const night1: Account[] = [
  { name: 'amy', id: BIG },
  { name: 'bob', id: '2' },
  { name: 'cat', id: '3' },
  { name: 'dan', id: NEAR[0]! },
];
// amy renamed herself, bob left, eve came, dan's id is another account with dan's old name.
const night2: Account[] = [
  { name: 'amelia', id: BIG },
  { name: 'cat', id: '3' },
  { name: 'dan', id: NEAR[1]! },
  { name: 'eve', id: '5' },
];

const ndjsonOf = (text: string) => text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
const write = (dir: string, name: string, shape: Shape, accounts: Account[]) => {
  const file = join(dir, name);
  writeFileSync(file, accounts.map((a) => shapes[shape](a)).join('\n') + '\n');
  return file;
};

describe('sgq diff of two files matches accounts by id', () => {
  it('prefixed follower records: a rename is renamed, ids past 2^53 stay exact and apart, in every format', async () => {
    const dir = tempDir();
    const older = write(dir, 'old.ndjson', 'followers', night1);
    const newer = write(dir, 'new.ndjson', 'followers', night2);
    const r = await sgq(['diff', older, newer]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^sgq: 2 gained, 2 lost, 1 renamed, 1 unchanged \(/m);
    const changes = ndjsonOf(r.stdout);
    expect(changes.map((c) => [c.change, c.renamed_from, c.follower_username])).toEqual(
      expect.arrayContaining([
        ['renamed', 'amy', 'amelia'],
        ['lost', null, 'bob'],
        ['lost', null, 'dan'],
        ['gained', null, 'dan'],
        ['gained', null, 'eve'],
      ]),
    );
    expect(changes).toHaveLength(5);
    // The ids as the service wrote them: bare integers, every digit.
    expect(r.stdout).toContain(`"change":"renamed","renamed_from":"amy","follower_username":"amelia","follower_userid":${BIG},`);
    for (const id of NEAR) expect(r.stdout).toContain(`"follower_userid":${id},`);

    const csv = await sgq(['diff', older, newer, '-o', 'csv']);
    expect(csv.stdout.split('\r\n')[0]).toMatch(/^change,renamed_from,follower_username,follower_userid,/);
    expect(csv.stdout).toContain(`renamed,amy,amelia,${BIG},`);
    const json = JSON.parse((await sgq(['diff', older, newer, '-o', 'json'])).stdout) as Record<string, unknown>[];
    expect(json.find((c) => c.change === 'renamed')).toMatchObject({ renamed_from: 'amy', follower_username: 'amelia' });
    const table = await sgq(['diff', older, newer, '-o', 'table', '--fields', 'change,renamed_from,follower_username']);
    expect(table.stdout).toMatch(/renamed\s*│?\s*amy\s*│?\s*amelia/);
  });

  it('unprefixed following records and a CSV export (ids as text) match by userid', async () => {
    const dir = tempDir();
    const older = write(dir, 'old.ndjson.txt', 'following', night1);
    // The newer side as CSV: every value comes back as a string, "3" matches 3.
    const csv = ['username,userid,bio,last_checked', ...night2.map((a) => `${a.name},${a.id},x,2026-11-01T00:00:00+00:00`)].join('\r\n');
    const newer = join(dir, 'new.csv');
    writeFileSync(newer, csv);
    const r = await sgq(['diff', older, newer]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/2 gained, 2 lost, 1 renamed, 1 unchanged/);
    expect(ndjsonOf(r.stdout).find((c) => c.change === 'renamed')).toMatchObject({ renamed_from: 'amy', username: 'amelia', userid: BIG });
  });

  it('the plain shape has no ids: matched by username, a rename is one lost and one gained, and no renamed count', async () => {
    const dir = tempDir();
    const r = await sgq(['diff', write(dir, 'a.ndjson', 'plain', night1), write(dir, 'b.ndjson.gz', 'plain', night2)]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^sgq: 2 gained, 2 lost, 2 unchanged \(/m);
    expect(ndjsonOf(r.stdout).map((c) => [c.change, c.username])).toEqual([['gained', 'amelia'], ['lost', 'amy'], ['lost', 'bob'], ['gained', 'eve']]);
    expect(r.stdout).not.toContain('renamed_from');
  });

  it('an old plain export against a new prefixed one: matched by username, and stderr says why', async () => {
    const dir = tempDir();
    const r = await sgq(['diff', write(dir, 'a.ndjson', 'plain', night1), write(dir, 'b.ndjson', 'followers', night2)]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/matched by username: .*a\.ndjson has no account ids, so a renamed account shows as one lost and one gained/);
    expect(r.stderr).toMatch(/2 gained, 2 lost, 2 unchanged/);
  });

  it('records without identity, or an unknown --key, fail in one line naming --key; never a zero count', async () => {
    const dir = tempDir();
    const bare = join(dir, 'bare.ndjson');
    writeFileSync(bare, '{"bio":"x","n":1}\n{"bio":"y","n":2}\n');
    const good = write(dir, 'good.ndjson', 'followers', night1);
    const none = await sgq(['diff', good, bare]);
    expect(none.exitCode).toBe(3);
    expect(none.stdout).toBe('');
    expect(none.stderr.trim().split('\n')).toHaveLength(1);
    expect(none.stderr).toMatch(/bare\.ndjson: no record has an id or username field .*--key FIELD/);
    const unknown = await sgq(['diff', good, write(dir, 'good2.ndjson', 'followers', night2), '--key', 'uid']);
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr.trim().split('\n')).toHaveLength(1);
    expect(unknown.stderr).toMatch(/good\.ndjson: no record has the field "uid" that --key names \(its first record has follower_username, follower_userid, /);
    // --key a field they share: matched by it, as asked.
    const byName = await sgq(['diff', good, write(dir, 'good3.ndjson', 'followers', night2), '--key', 'follower_username']);
    expect(byName.exitCode).toBe(0);
    expect(byName.stderr).toMatch(/2 gained, 2 lost, 2 unchanged/);
  });
});

/** A service whose lists the test changes between runs, in the shape its route has; pages of 2. */
async function service(lists: { followers: Account[]; following: Account[] }, shape: { followers: Shape; following: Shape }) {
  return stubs((req) => {
    const route = req.url.includes('get_following') ? 'following' : 'followers';
    const { user, page } = JSON.parse(req.body) as { user: string; page: number };
    const all = lists[route];
    const rows = all.slice((page - 1) * 2, page * 2).map((a) => shapes[shape[route]](a));
    // The body as text: the ids stay bare integers past 2^53.
    const text = JSON.stringify(envelope(page, page * 2 < all.length ? page + 1 : null, [], 1000, user)).replace('"data":[]', `"data":[${rows.join(',')}]`);
    return { text };
  });
}

function setup(lists: Parameters<typeof service>[0], shape: Parameters<typeof service>[1]) {
  const data = tempDir('sgq-data-');
  return service(lists, shape).then((stub) => ({
    store: join(data, 'sgq', 'snapshots'),
    run: (argv: string[]) => sgq(argv, { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k', XDG_DATA_HOME: data, SGQ_RETRIES: '0' } }),
  }));
}

const metas = (folder: string) =>
  readdirSync(folder)
    .filter((n) => n.endsWith('.json'))
    .map((n) => JSON.parse(readFileSync(join(folder, n), 'utf8')) as Record<string, unknown>)
    .sort((a, b) => Number(a.seq ?? 0) - Number(b.seq ?? 0));

describe('--snapshot --changes against a stub service', () => {
  it('follower and following records are stored by id; a rename is renamed, in the changes, the summary and sgq diff', async () => {
    const lists = { followers: night1, following: night1 };
    const s = await setup(lists, { followers: 'followers', following: 'following' });
    for (const verb of ['followers', 'following']) {
      const first = await s.run(['graph', verb, 'jack', '--all', '--snapshot', '--changes']);
      expect(first.exitCode, first.stderr).toBe(0);
      expect(first.stderr).toMatch(/first snapshot \(4 records\)/);
    }
    lists.followers = night2;
    lists.following = night2;
    for (const [verb, name, id] of [['followers', 'follower_username', 'follower_userid'], ['following', 'username', 'userid']] as const) {
      const second = await s.run(['graph', verb, 'jack', '--all', '--snapshot', '--changes']);
      expect(second.exitCode, second.stderr).toBe(0);
      expect(second.stderr).toMatch(/jack: 2 gained, 2 lost, 1 renamed, 1 unchanged since /);
      expect(second.stdout).toContain(`{"change":"renamed","renamed_from":"amy","${name}":"amelia","${id}":${BIG},`);
      expect(ndjsonOf(second.stdout).map((c) => c.change).sort()).toEqual(['gained', 'gained', 'lost', 'lost', 'renamed']);
      const folder = join(serviceFolderIn(s.store), 'default', `graph.get_${verb}`, 'username', 'jack');
      expect(metas(folder).map((m) => [m.sorted_by, m.identity])).toEqual([[id, 'id'], [id, 'id']]);
      // Sorted by the id's text, every digit kept.
      const stored = gunzipSync(readFileSync(join(folder, metas(folder)[1]!.file as string))).toString();
      expect(stored).toContain(`"${id}":${BIG},`);
      const diff = await s.run(['diff', 'jack', ...(verb === 'following' ? ['--following'] : [])]);
      expect(diff.stdout).toBe(second.stdout);
      expect(diff.stderr).toMatch(/jack: 2 gained, 2 lost, 1 renamed, 1 unchanged \(snapshot of/);
    }
  }, 60_000);

  it('the plain shape: stored by username, no renamed count', async () => {
    const lists = { followers: night1, following: [] };
    const s = await setup(lists, { followers: 'plain', following: 'plain' });
    expect((await s.run(['graph', 'followers', 'jack', '--all', '--snapshot'])).exitCode).toBe(0);
    lists.followers = night2;
    const r = await s.run(['graph', 'followers', 'jack', '--all', '--snapshot', '--changes']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/jack: 2 gained, 2 lost, 2 unchanged since /);
    expect(ndjsonOf(r.stdout).map((c) => [c.change, c.username]).sort()).toEqual([['gained', 'amelia'], ['gained', 'eve'], ['lost', 'amy'], ['lost', 'bob']]);
  }, 60_000);

  it('records without identity are not stored: exit 3, one line naming --key; an unknown --key exit 2; --key needs --snapshot', async () => {
    const s = await setup({ followers: night1, following: [] }, { followers: 'followers', following: 'plain' });
    const none = await sgqBare(s, ['--key', 'uid']);
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toMatch(/^sgq: jack: not stored as a snapshot: no record has the field "uid" that --key names \(its first record has follower_username, .*\); name a field the records have with --key FIELD$/m);
    expect((await s.run(['snapshots', 'list'])).stdout).toBe('');
    const alone = await s.run(['graph', 'followers', 'jack', '--key', 'follower_userid']);
    expect(alone.exitCode).toBe(2);
    expect(alone.stderr).toMatch(/--key needs --snapshot/);

    const bare = await stubs((req) => {
      const { user } = JSON.parse(req.body) as { user: string };
      return { body: envelope(1, null, [{ bio: 'x' }, { bio: 'y' }], 1000, user) };
    });
    const data = tempDir('sgq-data-');
    const r = await sgq(['graph', 'followers', 'jack', '--all', '--snapshot', '--changes'], { env: { SGQ_BASE_URL: bare.url, SGQ_API_KEY: 'k', XDG_DATA_HOME: data } });
    expect(r.exitCode).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/jack: not stored as a snapshot: no record has an id or username field \(follower_userid, userid, user_id, id, follower_username, username\) \(its first record has bio\).*--key FIELD/);
    expect((await sgq(['snapshots', 'list', '--snapshot-dir', join(data, 'sgq', 'snapshots')])).stdout).toBe('');
  }, 60_000);

  it('in a run of several users, one without identity fails alone: the others are stored, and its folder is let go', async () => {
    const stub = await stubs((req) => {
      const { user } = JSON.parse(req.body) as { user: string };
      const data = user === 'jill' ? [{ bio: 'x' }] : [{ username: 'a', userid: 1 }];
      return { body: envelope(1, null, data, 1000, user) };
    });
    const data = tempDir('sgq-data-');
    const env = { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k', XDG_DATA_HOME: data };
    const r = await sgq(['graph', 'following', 'jack', 'jill', 'joe', '--all', '--snapshot', '-o', 'json'], { env });
    expect(r.exitCode).toBe(3);
    // The records were written as usual, a valid document.
    expect((JSON.parse(r.stdout) as unknown[]).length).toBe(3);
    expect(r.stderr).toMatch(/^sgq: jill: not stored as a snapshot: no record has an id or username field/m);
    const list = await sgq(['snapshots', 'list', '-o', 'json'], { env });
    expect((JSON.parse(list.stdout) as { user: string; records: number }[]).map((x) => [x.user, x.records]).sort()).toEqual([['jack', 1], ['joe', 1]]);
    const folder = join(serviceFolderIn(join(data, 'sgq', 'snapshots')), 'default', 'graph.get_following', 'username', 'jill');
    // No data file, no temporary file, no lock left in its folder; a second run takes it at once.
    expect(readdirSync(folder)).toEqual([]);
    const again = await sgq(['graph', 'following', 'jill', '--all', '--snapshot', '--key', 'bio', '-q'], { env });
    expect(again.exitCode, again.stderr).toBe(0);
  }, 60_000);

  it('--key chooses the field a snapshot is stored by; a later run by id still compares right', async () => {
    const lists = { followers: night1, following: [] };
    const s = await setup(lists, { followers: 'followers', following: 'plain' });
    expect((await s.run(['graph', 'followers', 'jack', '--all', '--snapshot', '--key', 'follower_username'])).exitCode).toBe(0);
    lists.followers = night2;
    const r = await s.run(['graph', 'followers', 'jack', '--all', '--snapshot', '--changes']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/jack: 2 gained, 2 lost, 1 renamed, 1 unchanged since /);
    const folder = join(serviceFolderIn(s.store), 'default', 'graph.get_followers', 'username', 'jack');
    expect(metas(folder).map((m) => [m.sorted_by, m.identity])).toEqual([['follower_username', 'key'], ['follower_userid', 'id']]);
  }, 60_000);
});

/** A --snapshot run with extra flags against the stub service. */
const sgqBare = (s: Awaited<ReturnType<typeof setup>>, extra: string[]) => s.run(['graph', 'followers', 'jack', '--all', '--snapshot', ...extra]);

describe('snapshots of sgq 2.2 keep working', () => {
  /** A snapshot as sgq 2.2 wrote it: sorted by username, metadata without `identity`. */
  function oldSnapshot(store: string, lines: string[]) {
    // Where sgq 2.2 and 3.x kept it, with no service: the first run takes it over as its service's.
    const folder = join(store, 'default', 'graph.get_followers', 'username', 'jack');
    mkdirSync(folder, { recursive: true });
    const base = '2026-11-20T03-15-00.000Z-0a1b2c';
    writeFileSync(join(folder, `${base}.ndjson.gz`), gzipSync(lines.map((l) => `${l}\n`).join('')));
    const meta = { version: 1, profile: 'default', route: 'graph/get_followers', how: 'username', user: 'jack', taken_at: '2026-11-20T03:15:00.000Z', complete: true, pages: 2, records: lines.length, credits_used: 2, sorted_by: 'username', file: `${base}.ndjson.gz`, seq: 1 };
    writeFileSync(join(folder, `${base}.json`), JSON.stringify(meta, null, 2));
    return folder;
  }

  it('a plain snapshot of 2.2 against prefixed records with ids: matched by username, then by id from the next night', async () => {
    const lists = { followers: night2, following: [] };
    const s = await setup(lists, { followers: 'followers', following: 'plain' });
    oldSnapshot(s.store, [...night1].sort((a, b) => (a.name < b.name ? -1 : 1)).map((a) => shapes.plain(a)));
    const r = await s.run(['graph', 'followers', 'jack', '--all', '--snapshot', '--changes']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/jack: matched by username: the snapshot of 2026-11-20T03:15:00.000Z has no account ids/);
    expect(r.stderr).toMatch(/jack: 2 gained, 2 lost, 2 unchanged since 2026-11-20T03:15:00.000Z/);
    expect(ndjsonOf(r.stdout).map((c) => [c.change, c.username ?? c.follower_username]).sort()).toEqual([['gained', 'amelia'], ['gained', 'eve'], ['lost', 'amy'], ['lost', 'bob']]);
    // sgq diff over the same pair agrees.
    const diff = await s.run(['diff', 'jack']);
    expect(diff.exitCode).toBe(0);
    expect(ndjsonOf(diff.stdout).map((c) => c.change).sort()).toEqual(['gained', 'gained', 'lost', 'lost']);
    lists.followers = night1;
    const next = await s.run(['graph', 'followers', 'jack', '--all', '--snapshot', '--changes']);
    expect(next.stderr).toMatch(/jack: 2 gained, 2 lost, 1 renamed, 1 unchanged since/);
    expect(ndjsonOf(next.stdout).find((c) => c.change === 'renamed')).toMatchObject({ renamed_from: 'amelia', follower_username: 'amy' });
    // Re-sorting a snapshot by another field spilled nothing that stayed: no temporary file, no lock.
    const folder = join(serviceFolderIn(s.store), 'default', 'graph.get_followers', 'username', 'jack');
    expect(readdirSync(folder).filter((n) => n.startsWith('.') && n !== '.last-snapshot')).toEqual([]);
    expect(metas(folder).map((m) => m.identity)).toEqual([undefined, 'id', 'id']);
  }, 60_000);

  it('an empty snapshot of 2.2 (it could not read prefixed records) is not compared against: no flood of "gained"', async () => {
    const lists = { followers: night1, following: [] };
    const s = await setup(lists, { followers: 'followers', following: 'plain' });
    oldSnapshot(s.store, []);
    const r = await s.run(['graph', 'followers', 'jack', '--all', '--snapshot', '--changes']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/jack: the previous snapshot, taken by sgq before 2.3, holds no records .*; this one has 4 records; changes are printed from the next one/);
    const diff = await s.run(['diff', 'jack']);
    expect(diff.stderr).toMatch(/taken by sgq before 2.3, holds no records .*every account shows as gained/);
    lists.followers = night2;
    const next = await s.run(['graph', 'followers', 'jack', '--all', '--snapshot', '--changes']);
    expect(next.stderr).toMatch(/jack: 2 gained, 2 lost, 1 renamed, 1 unchanged since/);
  }, 60_000);
});
