import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { execaSync } from 'execa';
import { sgq, useSandboxProcess } from '../helpers/e2e.js';
import { runSgq, tempDir } from '../helpers/run.js';
import { withDuckDb } from '../helpers/duckdb.js';
import { envelope, useStubs } from '../helpers/stub-server.js';
import { until } from '../helpers/wait.js';
import { onLinuxAsRoot, useTmpfs } from '../helpers/tmpfs.js';

// --dataset, read back the way its users read it: DuckDB over the hive-partitioned glob.

const sb = useSandboxProcess();
const stubs = useStubs();

const query = (sql: string): Promise<Record<string, unknown>[]> =>
  withDuckDb(async (connection) => (await connection.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[]);
const records = (dir: string, extra = '') => `read_parquet('${dir}/records/**/*.parquet', hive_partitioning=true, union_by_name=true${extra})`;

describe('--dataset', () => {
  it('every run appends a file per route and day: counts per user and run, beside stdout, with stdin batches, --parallel and --limit', async () => {
    // Both runs into one day's partition: runs that straddle midnight (UTC) make two, so they
    // are made again (they cannot straddle it twice).
    let dir = '';
    let printed = 0;
    for (let attempt = 0; attempt < 2; attempt++) {
      dir = tempDir('sgq-dataset-');
      const first = await sgq(['graph', 'followers', '-', '--all', '--parallel', '2', '--dataset', dir, '-q'], { env: sb.env(), input: 'jack\ndorsey\n' });
      expect(first.exitCode, first.stderr).toBe(0);
      printed = first.stdout.split('\n').filter(Boolean).length;
      const second = await sgq(['graph', 'followers', 'jack', '--all', '--limit', '500', '-q'], { env: { ...sb.env(), SGQ_DATASET: dir } });
      expect(second.exitCode, second.stderr).toBe(0);
      if (readdirSync(join(dir, 'records', 'route=graph.get_followers')).length === 1) break;
    }
    const counts = await query(`SELECT query_user, fetched_at, route, CAST(date AS VARCHAR) AS date, count(*) AS n FROM ${records(dir)} GROUP BY ALL ORDER BY fetched_at, query_user`);
    expect(counts.map((c) => [c.query_user, c.route, c.n])).toEqual([
      ['dorsey', 'graph.get_followers', expect.any(String)],
      ['jack', 'graph.get_followers', expect.any(String)],
      ['jack', 'graph.get_followers', '500'],
    ]);
    expect(Number(counts[0]!.n) + Number(counts[1]!.n)).toBe(printed);
    expect(counts[0]!.date).toBe(String(counts[0]!.fetched_at).slice(0, 10));
    // One file a run, named by the run's id, in route=…/date=…; no temporary file where readers look.
    const partition = join(dir, 'records', 'route=graph.get_followers', `date=${String(counts[0]!.date)}`);
    const names = readdirSync(partition);
    expect(names).toHaveLength(2);
    for (const name of names) expect(name).toMatch(/^\d{8}T\d{9}Z-[0-9a-f]{8}\.parquet$/);
    const types = await query(`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM ${records(dir)})`);
    expect(Object.fromEntries(types.map((t) => [t.column_name, t.column_type]))).toMatchObject({
      query_user: 'VARCHAR',
      fetched_at: 'TIMESTAMP WITH TIME ZONE',
      follower_userid: 'BIGINT',
      follower_last_checked: 'TIMESTAMP WITH TIME ZONE',
      date: 'DATE',
      route: 'VARCHAR',
    });
    const info = await sgq(['dataset', 'info', dir, '-o', 'json']);
    expect(info.exitCode, info.stderr).toBe(0);
    expect(JSON.parse(info.stdout)).toEqual([{ kind: 'records', route: 'graph.get_followers', date: counts[0]!.date, files: 2, rows: printed + 500, bytes: expect.any(Number), differing: 0 }]);
  }, 60_000);

  it('--snapshot while records stream to stdout: snapshots commit at most once a second, so a batch of 30 users makes a few parts, not one per user', async () => {
    const dir = tempDir('sgq-dataset-');
    const users = Array.from({ length: 30 }, (_, i) => `user${i + 1}`);
    const snapshots = tempDir('sgq-snap-');
    const began = Date.now();
    const r = await sgq(['graph', 'followers', '-', '--all', '--snapshot', '--snapshot-dir', snapshots, '--dataset', dir, '-q'], { env: sb.env(), input: `${users.join('\n')}\n` });
    expect(r.exitCode, r.stderr).toBe(0);
    const seconds = (Date.now() - began) / 1000;
    const parts = (readdirSync(join(dir, 'records'), { recursive: true }) as string[]).filter((name) => name.endsWith('.parquet'));
    // One part per user before (each user's snapshot committed at its end, sealing a part);
    // now one a second at most, and the last at the end, however long the run took.
    expect(parts.length).toBeGreaterThanOrEqual(1);
    expect(parts.length, `${parts.length} parts in ${seconds} s`).toBeLessThanOrEqual(Math.ceil(seconds) + 1);
    const counts = await query(`SELECT count(DISTINCT query_user) AS users, count(*) AS n FROM ${records(dir)}`);
    expect(counts).toEqual([{ users: '30', n: String(r.stdout.split('\n').filter(Boolean).length) }]);
    // Every user's snapshot was committed, the last ones at the end.
    const listed = await sgq(['snapshots', 'list', '--snapshot-dir', snapshots, '-o', 'ndjson'], { env: sb.env() });
    expect(listed.exitCode, listed.stderr).toBe(0);
    expect(listed.stdout.split('\n').filter(Boolean)).toHaveLength(30);
  }, 60_000);

  it('a folder that cannot be written ends the run before any request (exit 1), and the --since-last marks stay as they were', async () => {
    const base = tempDir('sgq-dataset-');
    writeFileSync(join(base, 'file'), 'x');
    const state = join(base, 'marks.json');
    const r = await sgq(['graph', 'followers', 'jack', '--all', '--since-last', '--state', state, '--dataset', join(base, 'file', 'sub'), '--summary', 'json'], { env: sb.env() });
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/cannot write the dataset .*file\/sub: a part of its path is not a folder \(ENOTDIR\); .*nothing was fetched/);
    expect(() => readFileSync(state)).toThrow();
    const raw = await sgq(['graph', 'followers', 'jack', '--raw', '--dataset', base], { env: sb.env() });
    expect(raw.exitCode).toBe(2);
  });

  it('--snapshot --changes: the churn events go to changes/ with change, renamed_from, query_user and observed_at', async () => {
    const dir = tempDir('sgq-dataset-');
    const data = tempDir('sgq-data-');
    const lists = { now: night1 };
    const stub = await stubs((req) => {
      const { user, page } = JSON.parse(req.body) as { user: string; page: number };
      const rows = lists.now.slice((page - 1) * 2, page * 2).map(follower);
      return { text: JSON.stringify(envelope(page, page * 2 < lists.now.length ? page + 1 : null, [], 1000, user)).replace('"data":[]', `"data":[${rows.join(',')}]`) };
    });
    const run = () => sgq(['graph', 'followers', 'jack', '--all', '--snapshot', '--changes', '--dataset', dir], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k', XDG_DATA_HOME: data, SGQ_RETRIES: '0' } });
    expect((await run()).exitCode).toBe(0);
    lists.now = night2;
    const second = await run();
    expect(second.exitCode, second.stderr).toBe(0);
    const changes = await query(`SELECT change, renamed_from, follower_username, CAST(follower_userid AS VARCHAR) AS id, query_user, observed_at, route FROM read_parquet('${dir}/changes/**/*.parquet', hive_partitioning=true) ORDER BY change, follower_username`);
    expect(changes.map((c) => [c.change, c.renamed_from, c.follower_username, c.query_user, c.route])).toEqual([
      ['gained', null, 'eve', 'jack', 'graph.get_followers'],
      ['lost', null, 'bob', 'jack', 'graph.get_followers'],
      ['renamed', 'amy', 'amelia', 'jack', 'graph.get_followers'],
    ]);
    // The records of both runs are there too, though --changes printed only the changes.
    const runs = await query(`SELECT fetched_at, count(*) AS n FROM ${records(dir)} GROUP BY ALL ORDER BY 1`);
    expect(runs.map((r) => r.n)).toEqual(['3', '3']);
    expect(changes[0]!.observed_at).toBe(runs[1]!.fetched_at);
    // "Who left in the last 30 days", as docs/dataset.md writes it.
    const left = await query(`SELECT query_user, follower_username FROM read_parquet('${dir}/changes/**/*.parquet', hive_partitioning=true) WHERE change = 'lost' AND observed_at >= now() - INTERVAL 30 DAY`);
    expect(left).toEqual([{ query_user: 'jack', follower_username: 'bob' }]);
  }, 60_000);

  it('a run killed with SIGKILL at any moment leaves a dataset DuckDB reads whole: complete files only', async () => {
    const dir = tempDir('sgq-dataset-');
    for (let i = 0; i < 6; i++) {
      const child = sgq(['graph', 'followers', 'big_60000', 'other_30000', '--all', '--dataset', dir, '--concurrency', '2', '-q'], { env: sb.env() });
      let bytes = 0;
      const at = 200_000 + Math.floor(Math.random() * 8_000_000);
      child.stdout!.on('data', (c: Buffer) => (bytes += c.length));
      // Some runs end on their own: a kill after the end is a complete run.
      await until(() => bytes >= at || child.exitCode !== null, 'output to kill the run at');
      child.kill('SIGKILL');
      await child;
    }
    const done = await sgq(['graph', 'followers', 'jack', '--all', '--dataset', dir, '-q'], { env: sb.env() });
    expect(done.exitCode).toBe(0);
    const counts = await query(`SELECT query_user, fetched_at, count(*) AS n FROM ${records(dir)} GROUP BY ALL`);
    for (const c of counts) expect(['60000', '30000', '673']).toContain(c.n);
    expect(counts.some((c) => c.query_user === 'jack')).toBe(true);
    // The temporary files of the killed runs are not where readers look, and the next run swept them.
    expect(readdirSync(join(dir, '.sgq', 'staging'))).toEqual([]);
  }, 180_000);

  it('compaction merges a partition into one file while a reader counts: every read sees all rows exactly once', async () => {
    // Four runs into one day's partition: runs that straddle midnight (UTC) make two, so they
    // are made again (they cannot straddle it twice).
    let dir = '';
    for (let attempt = 0; attempt < 2; attempt++) {
      dir = tempDir('sgq-dataset-');
      for (const user of ['a_3000', 'b_2000', 'c_1000', 'd_500']) expect((await sgq(['graph', 'followers', user, '--all', '--dataset', dir, '-q'], { env: sb.env() })).exitCode).toBe(0);
      if (readdirSync(join(dir, 'records', 'route=graph.get_followers')).length === 1) break;
    }
    const db = await DuckDBInstance.create(':memory:');
    const reader = await db.connect();
    let reads = 0;
    let stop = false;
    const wrong: string[] = [];
    const reading = (async () => {
      while (!stop) {
        try {
          const n = (await reader.runAndReadAll(`SELECT count(*) AS n FROM ${records(dir)}`)).getRowObjectsJson()[0]!.n;
          if (n !== '6500') wrong.push(String(n));
          reads++;
        } catch (error) {
          // A listing made before the swap whose files are opened after it fails; it never counts wrong.
          if (!/No such file|No files found|Could not open|does not exist/i.test(String(error))) wrong.push(String(error));
        }
      }
    })();
    await until(() => reads > 0, 'a first read');
    const compact = await sgq(['dataset', 'compact', dir]);
    expect(compact.exitCode, compact.stderr).toBe(0);
    expect(compact.stderr).toMatch(/records route=graph\.get_followers date=\S+: 4 files merged into 1 \(6,500 rows\)/);
    const after = reads;
    await until(() => reads > after + 2, 'reads after the compaction');
    stop = true;
    await reading;
    reader.closeSync();
    expect(wrong).toEqual([]);
    const info = JSON.parse((await sgq(['dataset', 'info', dir, '-o', 'json'])).stdout) as { files: number; rows: number }[];
    expect(info.map((p) => [p.files, p.rows])).toEqual([[1, 6500]]);
    const counts = await query(`SELECT query_user, count(*) AS n FROM ${records(dir)} GROUP BY ALL ORDER BY 1`);
    expect(counts.map((c) => [c.query_user, c.n])).toEqual([['a_3000', '3000'], ['b_2000', '2000'], ['c_1000', '1000'], ['d_500', '500']]);
    // A run after the compaction appends beside the merged file; --before leaves later days alone.
    expect((await sgq(['graph', 'followers', 'jack', '--all', '--dataset', dir, '-q'], { env: sb.env() })).exitCode).toBe(0);
    const none = await sgq(['dataset', 'compact', dir, '--before', '2000-01-01']);
    expect(none.stderr).toMatch(/nothing to compact/);
    expect((await query(`SELECT count(*) AS n FROM ${records(dir)}`))[0]!.n).toBe('7173');
  }, 120_000);

  it('the built binary and an in-process run both write in the worker thread (tests run the thread users run): the same rows, every digit, a page cut by --limit', async () => {
    // 3 pages of 4; --limit 10 takes the third page's first 2 records only.
    const stub = await stubs((req) => {
      const { user, page } = JSON.parse(req.body) as { user: string; page: number };
      const rows = [0, 1, 2, 3].map((i) => exact((page - 1) * 4 + i));
      return { text: JSON.stringify(envelope(page, page < 3 ? page + 1 : null, [], 1000, user)).replace('"data":[]', `"data":[${rows.join(',')}]`) };
    });
    const env = { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k', SGQ_RETRIES: '0' };
    const args = (dir: string) => ['graph', 'followers', 'jack', '--all', '--limit', '10', '-v', '--dataset', dir];
    // (The main thread's rows are compared with the thread's by the next test, and by test/unit/dataset-worker.test.ts.)
    const [inWorker, inProc] = [tempDir('sgq-dataset-'), tempDir('sgq-dataset-')];
    const spawned = await sgq(args(inWorker), { env });
    const inProcess = await runSgq(args(inProc), { env });
    expect(spawned.exitCode, spawned.stderr).toBe(0);
    expect(inProcess.code, inProcess.stderr).toBe(0);
    expect(spawned.stderr).toMatch(/dataset: Parquet is written in a worker thread/);
    expect(inProcess.stderr).toMatch(/dataset: Parquet is written in a worker thread/);
    const rows = (dir: string) => query(`SELECT COLUMNS(* EXCLUDE (fetched_at))::VARCHAR FROM ${records(dir)} ORDER BY username`);
    const written = await rows(inWorker);
    expect(written).toEqual(await rows(inProc));
    // Exactly the records printed: the cut page's first two, every digit as sent.
    expect(written.map((r) => r.username)).toEqual(spawned.stdout.trim().split('\n').map((line) => /"username":"(u\d+)"/.exec(line)![1]).sort());
    expect(written).toHaveLength(10);
    expect(written.find((r) => r.username === 'u0')).toMatchObject({ id: PAST_64_BITS, score: '0.12345678901234567890123', query_user: 'jack' });
    expect(written.find((r) => r.username === 'u9')).toMatchObject({ id: String(2n ** 53n + 9n), score: '9.12345678901234567890123' });
  }, 60_000);

  it('a run that keeps snapshots writes in the main thread, from the records as parsed: the rows of the worker thread, every digit', async () => {
    const stub = await stubs((req) => {
      const { user, page } = JSON.parse(req.body) as { user: string; page: number };
      const rows = [0, 1, 2, 3].map((i) => exact((page - 1) * 4 + i));
      return { text: JSON.stringify(envelope(page, page < 3 ? page + 1 : null, [], 1000, user)).replace('"data":[]', `"data":[${rows.join(',')}]`) };
    });
    const env = { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k', SGQ_RETRIES: '0' };
    const [plain, nightly, store] = [tempDir('sgq-dataset-'), tempDir('sgq-dataset-'), tempDir('sgq-store-')];
    const inWorker = await sgq(['graph', 'followers', 'jack', '--all', '-v', '--dataset', plain], { env });
    const inMain = await sgq(['graph', 'followers', 'jack', '--all', '-v', '--dataset', nightly, '--snapshot', '--changes', '--snapshot-dir', store], { env });
    expect(inWorker.exitCode, inWorker.stderr).toBe(0);
    expect(inMain.exitCode, inMain.stderr).toBe(0);
    expect(inWorker.stderr).toMatch(/dataset: Parquet is written in a worker thread/);
    expect(inMain.stderr).toMatch(/dataset: Parquet is written in the main thread/);
    const rows = (dir: string) => query(`SELECT COLUMNS(* EXCLUDE (fetched_at))::VARCHAR FROM ${records(dir)} ORDER BY username`);
    const written = await rows(nightly);
    expect(written).toEqual(await rows(plain));
    expect(written).toHaveLength(12);
    expect(written.find((r) => r.username === 'u0')).toMatchObject({ id: PAST_64_BITS, score: '0.12345678901234567890123', query_user: 'jack' });
    // The snapshot holds the records as the service sent them: the dataset's columns were not added to them.
    const kept = JSON.parse((await sgq(['snapshots', 'list', '--snapshot-dir', store, '-o', 'json'], { env })).stdout) as { file: string }[];
    const lines = execaSync('zcat', [kept[0]!.file]).stdout.split('\n');
    expect(lines).toHaveLength(12);
    expect(lines.every((line) => !line.includes('fetched_at') && !line.includes('query_user'))).toBe(true);
  }, 60_000);

  for (const [signal, code] of [['SIGTERM', 143], ['SIGINT', 130]] as const) {
    it(`${signal} during a dataset run ends it (exit ${code}) with the records it printed in the dataset and nothing in staging`, async () => {
      const dir = tempDir('sgq-dataset-');
      const child = sgq(['graph', 'followers', 'big_200000', '--all', '--dataset', dir, '-q'], { env: sb.env() });
      let bytes = 0;
      child.stdout!.on('data', (c: Buffer) => (bytes += c.length));
      await until(() => bytes >= 1_000_000 || child.exitCode !== null, 'output to stop the run at');
      child.kill(signal);
      const r = await child;
      expect(r.exitCode, r.stderr).toBe(code);
      const printed = r.stdout.split('\n').filter(Boolean).length;
      expect(printed).toBeLessThan(200_000);
      const [counted] = await query(`SELECT count(*) AS n FROM ${records(dir)}`);
      expect(Number(counted!.n)).toBe(printed);
      expect(readdirSync(join(dir, '.sgq', 'staging'))).toEqual([]);
    }, 60_000);
  }

  it('schemas grow: files of different columns read together with union_by_name', async () => {
    const dir = tempDir('sgq-dataset-');
    let extra = false;
    const stub = await stubs((req) => {
      const { user, page } = JSON.parse(req.body) as { user: string; page: number };
      const rows = night1.map((a) => (extra ? follower(a).replace('{', '{"follower_verified":true,') : follower(a)));
      return { text: JSON.stringify(envelope(page, null, [], 1000, user)).replace('"data":[]', `"data":[${rows.join(',')}]`) };
    });
    const env = { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k', SGQ_RETRIES: '0', SGQ_DATASET: dir };
    expect((await sgq(['graph', 'followers', 'jack', '--all'], { env })).exitCode).toBe(0);
    extra = true;
    expect((await sgq(['graph', 'followers', 'jack', '--all'], { env })).exitCode).toBe(0);
    const rows = await query(`SELECT follower_verified, count(*) AS n FROM ${records(dir)} GROUP BY ALL ORDER BY 1 NULLS FIRST`);
    // A field the followers' description lacks is text: the same type in every file that has it.
    expect(rows).toEqual([{ follower_verified: null, n: '3' }, { follower_verified: 'true', n: '3' }]);
    // A partition of two schemas, two files each: compaction merges each pair and loses no row.
    expect((await sgq(['graph', 'followers', 'jack', '--all'], { env })).exitCode).toBe(0);
    extra = false;
    expect((await sgq(['graph', 'followers', 'jack', '--all'], { env })).exitCode).toBe(0);
    const compact = await sgq(['dataset', 'compact', dir]);
    expect(compact.exitCode, compact.stderr).toBe(0);
    expect(compact.stderr.match(/2 files merged into 1 \(6 rows\)/g)).toHaveLength(2);
    const merged = await query(`SELECT follower_verified, count(*) AS n FROM ${records(dir)} GROUP BY ALL ORDER BY 1 NULLS FIRST`);
    expect(merged).toEqual([{ follower_verified: null, n: '6' }, { follower_verified: 'true', n: '6' }]);
    const info = JSON.parse((await sgq(['dataset', 'info', dir, '-o', 'json'])).stdout) as { files: number; rows: number }[];
    expect(info.map((p) => [p.files, p.rows])).toEqual([[2, 12]]);
  }, 60_000);
});

describe.runIf(onLinuxAsRoot)('--dataset on a full disk', () => {
  const disk = useTmpfs('256k');
  it('fails in one line (exit 1), keeps no part file, and the --since-last marks do not advance', async () => {
    const dir = join(disk.path, 'ds');
    mkdirSync(dir);
    const state = join(tempDir(), 'marks.json');
    const r = await sgq(['graph', 'followers', 'big_60000', '--all', '--since-last', '--state', state, '--dataset', dir, '-q'], { env: sb.env() });
    expect(r.exitCode).toBe(1);
    // The write failed in the worker thread; the main thread says so once, in one line.
    expect(r.stderr.match(/cannot write the dataset .*: the disk is full \(ENOSPC\); free some space on it/g)).toHaveLength(1);
    expect(r.stderr).not.toMatch(/^\s+at /m);
    expect(() => readFileSync(state)).toThrow();
    expect(readdirSync(join(dir, '.sgq', 'staging'))).toEqual([]);
  }, 60_000);

  it('a part that cannot be created in staging (read-only) ends the run before any request: the worker answers first', async () => {
    const dir = tempDir('sgq-dataset-');
    const staging = join(dir, '.sgq', 'staging');
    mkdirSync(staging, { recursive: true });
    execaSync('mount', ['--bind', staging, staging]);
    try {
      execaSync('mount', ['-o', 'remount,bind,ro', staging]);
      const stub = await stubs(() => ({ body: envelope(1, null, [], 1000) }));
      const r = await sgq(['graph', 'followers', 'jack', '--all', '--dataset', dir], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k', SGQ_RETRIES: '0' } });
      expect(r.exitCode).toBe(1);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(/cannot write the dataset .*: the file system is read-only \(EROFS\); .*nothing was fetched/);
      expect(stub.requests).toEqual([]);
    } finally {
      execaSync('umount', [staging], { reject: false });
    }
  }, 60_000);
});

const BIG = '18446744073709551617';
type Account = { name: string; id: string };
const night1: Account[] = [
  { name: 'amy', id: BIG },
  { name: 'bob', id: '2' },
  { name: 'cat', id: '3' },
];
// amy renamed herself, bob left, eve came.
const night2: Account[] = [
  { name: 'amelia', id: BIG },
  { name: 'cat', id: '3' },
  { name: 'eve', id: '5' },
];
const PAST_64_BITS = '18446744073709551617';
/** Follower k: an id past 2^53 (past 64 bits for the first) and a DECIMAL(38,23) score. */
const exact = (k: number) => `{"username":"u${k}","id":${k === 0 ? PAST_64_BITS : 2n ** 53n + BigInt(k)},"score":${k}.12345678901234567890123}`;
const follower = (a: Account) =>
  `{"follower_username":${JSON.stringify(a.name)},"follower_userid":${a.id},"follower_num_followers":12,"follower_last_checked":"2026-11-01T00:00:00+00:00"}`;
