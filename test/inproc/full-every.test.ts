// `--full-every N` (setting full-every) against a service whose list the test sets and which
// honours `since` as the spec says (the records that came since): the nights between whole
// ones fetch only what came since the user's last run and keep a partial snapshot; gains are
// reported the night they happen, losses on the next whole night with the window they fell in.
// Also: the service that does not honour `since` (an error record, or the whole list again),
// `--full`, `--dry-run`, nights cut short, `sgq snapshots list`, `sgq history`, `sgq diff`,
// `--confirm-lost`, the dataset's churn events and the notification.
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { withDuckDb } from '../helpers/duckdb.js';
import { lines, ndjson, runSgq, serviceFolderIn, tempDir, type RunOptions } from '../helpers/run.js';
import { envelope, useStubs } from '../helpers/stub-server.js';

const stubs = useStubs();
const DAY = 86_400_000;
const FIRST = Date.UTC(2026, 10, 1, 3, 15);
/** Night n's run (03:15 UTC), and its taken_at. */
const night = (n: number) => () => new Date(FIRST + (n - 1) * DAY);
const at = (n: number) => night(n)().toISOString();

interface Account {
  name: string;
  id: number;
  /** When it came (epoch ms): its last_checked, which `since` selects by. */
  came: number;
}

/** What the service does with `since`: honours it, answers it with an error record, or ignores it (the whole list again). */
type SinceMode = 'honour' | 'error' | 'ignore';

interface World {
  list: Account[];
  since: SinceMode;
  /** Answers page N of any call with a 500 (a night cut short by a failure). */
  failPage?: number;
}

const micros = (ms: number) => `${new Date(ms).toISOString().slice(0, 23)}000+00:00`;

/** A followers route serving `world.list`, newest first, `page` records a page, honouring `since` as world.since says. */
async function service(world: World, page = 500) {
  // Three credits a call that brings data, as the service's table says: --max-credits measures them.
  let credits = 1_000_000;
  return stubs((req) => {
    const body = JSON.parse(req.body) as { user: string; page: number; since?: string };
    if (world.failPage === body.page) return { status: 500, body: { message: 'down' } };
    if (body.since !== undefined && world.since === 'error') return { body: envelope(body.page, null, [{ error: "Invalid 'since' parameter format. It should be an ISO formatted datetime string." }], credits, body.user) };
    let all = [...world.list].sort((a, b) => b.came - a.came);
    if (body.since !== undefined && world.since === 'honour') all = all.filter((a) => a.came >= Date.parse(body.since!));
    const records = all.map((a) => ({ follower_username: a.name, follower_userid: a.id, follower_last_checked: micros(a.came) }));
    credits -= 3;
    return { body: envelope(body.page, body.page * page < records.length ? body.page + 1 : null, records.slice((body.page - 1) * page, body.page * page), credits, body.user) };
  });
}

async function setup(world: World, page?: number) {
  const stub = await service(world, page);
  const data = tempDir('sgq-data-');
  const config = tempDir();
  const run = (argv: string[], options: RunOptions = {}) =>
    runSgq(argv, { ...options, env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k', XDG_DATA_HOME: data, SGQ_CONFIG_DIR: config, SGQ_RETRIES: '0', ...options.env } });
  return { run, stub, data, pages: () => stub.requests.length };
}

let nextId = 1;
const account = (name: string, came: number): Account => ({ name, id: nextId++, came });
/** `count` accounts that came on night n (between the run of the night before and its own). */
const cameOn = (n: number, prefix: string, count: number) => Array.from({ length: count }, (_, i) => account(`${prefix}${i}`, FIRST + (n - 2) * DAY + ((i + 1) * DAY) / (count + 2)));

const CHANGES = ['graph', 'followers', 'jack', '--all', '--snapshot', '--changes'];

/** The changes a night printed: `gained NAME`, `lost NAME after … before …`. */
const said = (stdout: string) =>
  ndjson(stdout)
    .map((c) => (c.change === 'lost' ? `lost ${String(c.follower_username)} after ${String(c.left_after)} before ${String(c.left_before)}` : `${String(c.change)} ${String(c.follower_username)}`))
    .sort();

describe('--full-every N: twelve nights, gains every night, losses every third night', () => {
  it('pays at most 40% of the pages of nightly whole runs, says each gain on its night and each loss on the next whole night, with its window, and nothing else', async () => {
    const world: World = { list: Array.from({ length: 5000 }, (_, i) => account(`old${i}`, FIRST - DAY - i * 1000)), since: 'honour' };
    const every4 = await setup(world);
    const whole = await setup(world);
    const spent = { every4: 0, whole: 0 };
    /** The night each account came (null: before night 1). */
    const cameNight = new Map<string, number>();
    const lastWholeList = new Set<string>();
    const expected = { gained: [] as string[], lost: [] as string[] };
    const goneSinceWhole: { name: string; afterNight: number }[] = [];
    let lastWhole = 1;
    for (let n = 1; n <= 13; n++) {
      expected.gained = [];
      expected.lost = [];
      if (n > 1) {
        const came = cameOn(n, `n${n}_`, 25);
        world.list.push(...came);
        for (const a of came) cameNight.set(a.name, n);
        expected.gained = came.map((a) => `gained ${a.name}`);
      }
      if (n % 3 === 0) {
        // Seven old accounts leave, and three that came lately (one of them last night).
        const recent = world.list.filter((a) => (cameNight.get(a.name) ?? 0) >= n - 2 && (cameNight.get(a.name) ?? 0) < n).slice(-3);
        const leaving = [...world.list.slice(n * 10, n * 10 + 7), ...recent];
        world.list = world.list.filter((a) => !leaving.includes(a));
        for (const a of leaving) goneSinceWhole.push({ name: a.name, afterNight: lastWholeList.has(a.name) ? lastWhole : cameNight.get(a.name)! });
      }
      const isWhole = (n - 1) % 4 === 0;
      if (isWhole && n > 1) {
        expected.lost = goneSinceWhole.splice(0).map((g) => `lost ${g.name} after ${at(g.afterNight)} before ${at(n)}`);
      }
      const before = { every4: every4.pages(), whole: whole.pages() };
      const a = await every4.run([...CHANGES, '--full-every', '4'], { now: night(n) });
      const b = await whole.run(CHANGES, { now: night(n) });
      expect(a.code, a.stderr).toBe(0);
      expect(b.code, b.stderr).toBe(0);
      if (n <= 12) {
        spent.every4 += every4.pages() - before.every4;
        spent.whole += whole.pages() - before.whole;
      }
      expect(said(a.stdout), `night ${n}`).toEqual([...expected.gained, ...expected.lost].sort());
      if (!isWhole) expect(every4.pages() - before.every4, `night ${n}: one page`).toBe(1);
      if (isWhole) {
        lastWhole = n;
        lastWholeList.clear();
        for (const acc of world.list) lastWholeList.add(acc.name);
      }
      // Whole nightly runs report each loss on its night.
      expect(ndjson(b.stdout).filter((c) => c.change === 'lost')).toHaveLength(n % 3 === 0 ? 10 : 0);
    }
    expect(spent.every4).toBeLessThanOrEqual(0.4 * spent.whole);
  }, 120_000);
});

/** Five nights of a small list (two records a page), with `--full-every 3`: nights 1 and 4 whole. */
async function smallWorld(extra: string[] = []) {
  const world: World = { list: ['amy', 'bob', 'cat', 'dan'].map((name, i) => account(name, FIRST - DAY - i * 1000)), since: 'honour' };
  const s = await setup(world, 2);
  const nightly = async (n: number, change: (w: World) => void, more: string[] = []) => {
    change(world);
    const r = await s.run([...CHANGES, '--full-every', '3', ...extra, ...more], { now: night(n) });
    return r;
  };
  return { world, ...s, nightly };
}

const leave = (name: string) => (w: World) => void (w.list = w.list.filter((a) => a.name !== name));
const come = (name: string, n: number) => (w: World) => void w.list.push(account(name, FIRST + (n - 2) * DAY + DAY / 2));

describe('--full-every N: the partial snapshots', () => {
  it('asks what came since the last run on the nights between whole ones; sgq snapshots list marks those partial', async () => {
    const s = await smallWorld();
    expect((await s.nightly(1, () => undefined)).code).toBe(0);
    const second = await s.nightly(2, come('eve', 2));
    expect(second.code, second.stderr).toBe(0);
    expect(said(second.stdout)).toEqual(['gained eve']);
    // The request of night 2 carried the start of night 1's run as since.
    expect(s.stub.bodies().at(-1)).toEqual({ user: 'jack', how: 'username', page: 1, since: at(1) });
    expect(second.stderr).toContain(`sgq: jack: 1 gained since ${at(1)}`);
    const third = await s.nightly(3, leave('bob'));
    expect(said(third.stdout)).toEqual([]);
    const list = await s.run(['snapshots', 'list', 'jack', '-o', 'json']);
    const rows = JSON.parse(list.stdout) as { taken_at: string; partial: boolean; records: number; pages: number }[];
    expect(rows.map((r) => [r.taken_at, r.partial, r.records])).toEqual([
      [at(1), false, 4],
      // The last whole list plus what came since: bob, gone on night 3, is still counted.
      [at(2), true, 5],
      [at(3), true, 5],
    ]);
    const fourth = await s.nightly(4, () => undefined);
    expect(said(fourth.stdout)).toEqual([`lost bob after ${at(1)} before ${at(4)}`]);
    const rows4 = JSON.parse((await s.run(['snapshots', 'list', 'jack', '-o', 'json'])).stdout) as { partial: boolean; records: number }[];
    expect(rows4.at(-1)).toMatchObject({ partial: false, records: 4 });
  }, 60_000);

  it('sgq history marks the count of a partial snapshot as an upper bound; sgq diff compares whole snapshots only', async () => {
    const s = await smallWorld();
    await s.nightly(1, () => undefined);
    await s.nightly(2, (w) => (come('eve', 2)(w), leave('amy')(w)));
    await s.nightly(3, come('fay', 3));
    await s.nightly(4, () => undefined);
    const history = await s.run(['history', 'jack', '-o', 'json']);
    expect(history.code, history.stderr).toBe(0);
    const rows = (JSON.parse(history.stdout) as { taken_at: string; count: number; count_is_upper_bound: boolean; gained: number | null; lost: number | null }[]).map((r) => [r.taken_at, r.count, r.count_is_upper_bound, r.gained, r.lost]);
    expect(rows).toEqual([
      [at(1), 4, false, null, null],
      [at(2), 5, true, 1, 0],
      [at(3), 6, true, 1, 0],
      [at(4), 5, false, 0, 1],
    ]);
    // The last two whole snapshots: nights 1 and 4.
    const diff = await s.run(['diff', 'jack']);
    expect(diff.code, diff.stderr).toBe(0);
    expect(ndjson(diff.stdout).map((c) => `${String(c.change)} ${String(c.follower_username)}`).sort()).toEqual(['gained eve', 'gained fay', 'lost amy']);
    expect(diff.stderr).toContain(`snapshot of ${at(1)} to snapshot of ${at(4)}`);
    // Up to night 3, only one whole snapshot.
    const early = await s.run(['diff', 'jack', '--at', at(3)]);
    expect(early.code).toBe(2);
  }, 60_000);

  it('--full fetches the whole list on a night between whole ones; a whole night starts the count again', async () => {
    const s = await smallWorld();
    await s.nightly(1, () => undefined);
    const forced = await s.nightly(2, leave('cat'), ['--full']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(said(forced.stdout)).toEqual([`lost cat after ${at(1)} before ${at(2)}`]);
    expect(s.stub.bodies().at(-1)).not.toHaveProperty('since');
    const next = await s.nightly(3, come('gus', 3));
    expect(said(next.stdout)).toEqual(['gained gus']);
    expect(s.stub.bodies().at(-1)).toHaveProperty('since', at(2));
  }, 60_000);

  it('the setting full-every (SGQ_FULL_EVERY) does what the flag does; a bad value is exit 3; the flags need --snapshot', async () => {
    const s = await smallWorld();
    const env = { SGQ_FULL_EVERY: '3' };
    await s.run(CHANGES, { now: night(1), env });
    s.world.list.push(account('hal', FIRST + DAY / 2));
    const second = await s.run(CHANGES, { now: night(2), env });
    expect(said(second.stdout)).toEqual(['gained hal']);
    expect(s.stub.bodies().at(-1)).toHaveProperty('since', at(1));
    const bad = await s.run(CHANGES, { env: { SGQ_FULL_EVERY: '0' } });
    expect(bad.code).toBe(3);
    expect(bad.stderr).toMatch(/^sgq: invalid full-every "0" \(from SGQ_FULL_EVERY\)/);
    for (const flag of [['--full-every', '3'], ['--full']]) {
      const alone = await s.run(['graph', 'followers', 'jack', '--all', ...flag]);
      expect(alone.code).toBe(2);
      expect(alone.stderr).toContain(`${flag[0]} needs --snapshot`);
    }
  }, 60_000);
});

describe('--full-every N: a service that does not honour since', () => {
  it('an error record for the since call: that user falls back to its whole list that night, in one line', async () => {
    const s = await smallWorld();
    await s.nightly(1, () => undefined);
    s.world.since = 'error';
    const r = await s.nightly(2, (w) => (come('ivy', 2)(w), leave('dan')(w)));
    expect(r.code, r.stderr).toBe(0);
    expect(lines(r.stderr).filter((l) => l.includes('whole list'))).toEqual([expect.stringMatching(/^sgq: jack: .*Invalid 'since' parameter format.*; its whole list is fetched tonight$/)]);
    // A whole night after all: the loss is known tonight.
    expect(said(r.stdout)).toEqual(['gained ivy', `lost dan after ${at(1)} before ${at(2)}`]);
    const rows = JSON.parse((await s.run(['snapshots', 'list', 'jack', '-o', 'json'])).stdout) as { partial: boolean }[];
    expect(rows.map((x) => x.partial)).toEqual([false, false]);
  }, 60_000);

  it('an answer more than half of which the kept snapshot holds (since ignored): the whole list that night, said in one line', async () => {
    const world: World = { list: Array.from({ length: 8 }, (_, i) => account(`old${i}`, FIRST - DAY - i * 1000)), since: 'honour' };
    const s = await setup(world, 5);
    expect((await s.run([...CHANGES, '--full-every', '3'], { now: night(1) })).code).toBe(0);
    world.since = 'ignore';
    world.list.push(account('jon', FIRST + DAY / 2));
    const before = s.pages();
    const r = await s.run([...CHANGES, '--full-every', '3'], { now: night(2) });
    expect(r.code, r.stderr).toBe(0);
    expect(lines(r.stderr).filter((l) => l.includes('whole list'))).toEqual([expect.stringMatching(/^sgq: jack: the service did not honour since \(4 of the 5 records of its first answer are in the last snapshot\); its whole list is fetched tonight$/)]);
    expect(said(r.stdout)).toEqual(['gained jon']);
    // The first answer (page 1 with since, dropped) and the whole list (2 pages of 5).
    expect(s.pages() - before).toBe(3);
    const rows = JSON.parse((await s.run(['snapshots', 'list', 'jack', '-o', 'json'])).stdout) as { partial: boolean; records: number }[];
    expect(rows.at(-1)).toMatchObject({ partial: false, records: 9 });
  }, 60_000);
});

describe('--full-every N: nights cut short', () => {
  it('a night cut short by --max-credits or a failure keeps nothing, and that user\'s next run is whole', async () => {
    const s = await smallWorld();
    await s.nightly(1, () => undefined);
    // Night 2 would be partial: a failure on its first page keeps nothing.
    s.world.failPage = 1;
    const failed = await s.nightly(2, come('kim', 2));
    expect(failed.code).not.toBe(0);
    s.world.failPage = undefined;
    // The note that says so, the owner's alone, in the user's folder.
    const note = join(serviceFolderIn(join(s.data, 'sgq', 'snapshots')), 'default', 'graph.get_followers', 'username', 'jack', '.whole-next.json');
    expect(statSync(note).mode & 0o777).toBe(0o600);
    const third = await s.nightly(3, () => undefined);
    expect(existsSync(note)).toBe(false);
    expect(third.code, third.stderr).toBe(0);
    // Whole (no since) although the count of runs says partial.
    expect(s.stub.bodies().at(-1)).not.toHaveProperty('since');
    expect(said(third.stdout)).toEqual(['gained kim']);
    // The next one is partial again.
    const fourth = await s.nightly(4, come('lea', 4));
    expect(s.stub.bodies().at(-1)).toHaveProperty('since', at(3));
    expect(said(fourth.stdout)).toEqual(['gained lea']);
    // Night 5, partial too: what came since takes two pages, and --max-credits 3 pays for one.
    const cut = await s.nightly(5, (w) => (come('mo', 5)(w), come('ned', 5)(w), come('ola', 5)(w), leave('amy')(w)), ['--max-credits', '3']);
    expect(s.stub.bodies().at(-1)).toHaveProperty('since', at(4));
    expect(cut.stderr).toContain('not stored as a snapshot');
    expect(said(cut.stdout)).toEqual([]);
    const sixth = await s.nightly(6, () => undefined);
    expect(s.stub.bodies().at(-1)).not.toHaveProperty('since');
    expect(said(sixth.stdout)).toEqual(['gained mo', 'gained ned', 'gained ola', `lost amy after ${at(3)} before ${at(6)}`]);
    const rows = JSON.parse((await s.run(['snapshots', 'list', 'jack', '-o', 'json'])).stdout) as { taken_at: string; partial: boolean }[];
    expect(rows.map((x) => [x.taken_at, x.partial])).toEqual([
      [at(1), false],
      [at(3), false],
      [at(4), true],
      [at(6), false],
    ]);
  }, 60_000);
});

describe('--full-every N with --dry-run', () => {
  it('says which users are whole tonight and what the night will cost, sending nothing', async () => {
    const world: World = { list: ['amy', 'bob', 'cat', 'dan', 'eve'].map((name, i) => account(name, FIRST - DAY - i * 1000)), since: 'honour' };
    const s = await setup(world, 2);
    const users = 'jack\njill\n';
    const run = (n: number, more: string[] = []) => s.run(['graph', 'followers', '-', '--all', '--snapshot', '--full-every', '2', ...more], { now: night(n), stdin: users });
    expect((await run(1)).code).toBe(0);
    const before = s.pages();
    const dry = await run(2, ['--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(s.pages()).toBe(before);
    expect(dry.stderr).toContain(`sgq: jack: what came since ${at(1)} tonight (run 2 of 2)`);
    expect(dry.stderr).toContain(`{"user":"jack","how":"username","page":1,"since":"${at(1)}"}`);
    expect(dry.stderr).toContain('sgq: --full-every 2: 0 of 2 users whole tonight; about 2 calls, 6 credits');
    const forced = await run(2, ['--dry-run', '--full']);
    expect(forced.stderr).toContain('sgq: jack: whole tonight (--full); its last whole snapshot took 3 pages');
    expect(forced.stderr).toContain('sgq: --full-every 2: 2 of 2 users whole tonight; about 6 calls, 18 credits');
    expect((await run(2)).code).toBe(0);
    const third = await run(3, ['--dry-run']);
    expect(third.stderr).toContain('sgq: jill: whole tonight (every 2 runs); its last whole snapshot took 3 pages');
    expect(s.pages()).toBe(before + 2);
  }, 60_000);
});

describe('--full-every N with --confirm-lost, --dataset and --notify', () => {
  it('a loss is confirmed by whole runs only; the dataset and the notification tell gains on their night and losses with their window', async () => {
    const world: World = { list: ['amy', 'bob', 'cat'].map((name, i) => account(name, FIRST - DAY - i * 1000)), since: 'honour' };
    const s = await setup(world, 2);
    const receiver = await stubs(() => ({ body: { ok: true } }));
    const dataset = tempDir('sgq-dataset-');
    const run = (n: number) => s.run([...CHANGES, '--full-every', '2', '--confirm-lost', '2', '--dataset', dataset, '--notify', `${receiver.url}/hook`], { now: night(n) });
    const nights: [number, (w: World) => void][] = [
      [1, () => undefined],
      [2, (w) => (come('dot', 2)(w), leave('bob')(w))],
      // Whole: bob missing from one whole run, not lost yet.
      [3, () => undefined],
      [4, () => undefined],
      // Whole: bob missing from two whole runs in a row: lost, after night 1's whole snapshot.
      [5, () => undefined],
    ];
    const printed: string[][] = [];
    for (const [n, change] of nights) {
      change(world);
      const r = await run(n);
      expect(r.code, r.stderr).toBe(0);
      printed.push(said(r.stdout));
    }
    expect(printed).toEqual([[], ['gained dot'], [], [], [`lost bob after ${at(1)} before ${at(5)}`]]);
    const posts = receiver.requests.map((q) => JSON.parse(q.body) as { changes: { user: string; gained: Record<string, unknown>[]; lost: Record<string, unknown>[] }[] });
    expect(posts.map((p) => p.changes.flatMap((c) => [...c.gained.map((g) => `gained ${String(g.follower_username)}`), ...c.lost.map((l) => `lost ${String(l.follower_username)} ${String(l.left_after)} ${String(l.left_before)}`)]))).toEqual([['gained dot'], [`lost bob ${at(1)} ${at(5)}`]]);
    const events = await withDuckDb(async (db) => {
      const read = await db.runAndReadAll(`SELECT change, follower_username, left_after, left_before FROM read_parquet('${join(dataset, 'changes')}/**/*.parquet', hive_partitioning = true, union_by_name = true) ORDER BY observed_at, follower_username`);
      return read.getRowObjects().map((r) => [r.change, r.follower_username, r.left_after ?? null, r.left_before ?? null]);
    });
    expect(events).toEqual([
      ['gained', 'dot', null, null],
      ['lost', 'bob', at(1), at(5)],
    ]);
  }, 60_000);
});
