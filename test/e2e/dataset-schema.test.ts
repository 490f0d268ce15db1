import { cpSync, mkdirSync, readdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pl from 'nodejs-polars';
import { describe, expect, it } from 'vitest';
import { sgq } from '../helpers/e2e.js';
import { runSgq, tempDir } from '../helpers/run.js';
import { withDuckDb } from '../helpers/duckdb.js';
import { envelope, useStubs } from '../helpers/stub-server.js';

// Five nights of a nightly cron job, as its users read them back: one table over every file
// (DuckDB's union_by_name, Polars' scan, which refuses a column whose type drifts between
// files). Each night's records differ in which fields are null, and the values test every
// digit: decimals longer than a double, ids past 2^53 and past 2^63, CJK and emoji text.

const stubs = useStubs();

const query = (sql: string): Promise<Record<string, unknown>[]> =>
  withDuckDb(async (connection) => (await connection.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[]);
const all = (glob: string) => `read_parquet('${glob}', hive_partitioning = true, union_by_name = true)`;

const TWO_53_PLUS_1 = '9007199254740993';
const TWO_63 = '9223372036854775808';
const PAST_64_BITS = '18446744073709551617';

/** A follower as the service shapes it; `last` null or a date-time, `bio` null or text. */
const follower = (name: string, id: string, last: string | null, bio: string | null, extra = '') =>
  `{"follower_username":${JSON.stringify(name)},"follower_userid":${id},"follower_bio":${JSON.stringify(bio)},"follower_num_followers":12,` +
  `"follower_last_tweet":${JSON.stringify(last)},"follower_last_checked":"2025-03-01T00:00:00.123456+00:00"${extra}}`;

interface Night {
  day: string;
  followers: string[];
  scores: string[];
}

/** Five nights: follower_last_tweet all null on the first and fourth, bios all null on the third, a new field on the fifth. */
const NIGHTS: Night[] = [
  { day: '2025-03-01', followers: [follower('amy', TWO_53_PLUS_1, null, '東京の猫 🐈‍⬛'), follower('bob', '2', null, 'plain')], scores: ['{"date":"2025-02-27","score":1.5}', '{"date":"2025-02-28","score":2}'] },
  { day: '2025-03-02', followers: [follower('amy', TWO_53_PLUS_1, '2025-03-01T23:59:59.999999+00:00', '東京の猫 🐈‍⬛'), follower('cat', '3', '2025-02-28T12:00:00+09:00', 'Ἀθῆναι')], scores: ['{"date":"2025-03-01","score":83.12345678901234567890123}'] },
  { day: '2025-03-03', followers: [follower('dan', PAST_64_BITS, '2025-03-02T08:00:00Z', null), follower('eve', TWO_63, '2025-03-02T09:00:00Z', null)], scores: ['{"date":"2025-03-02","score":7}'] },
  { day: '2025-03-04', followers: [follower('amy', TWO_53_PLUS_1, null, '👩🏽‍💻 코드')], scores: ['{"date":"2025-03-03","score":-0.000000000000000000001}'] },
  { day: '2025-03-05', followers: [follower('fay', '5', '2025-03-04T10:00:00+00:00', 'x', ',"follower_verified":true')], scores: ['{"date":"2025-03-04","score":83.12345678901234567890123}'] },
];

/** A stub of the service that answers every route with the night's records, one page. */
async function service(night: () => Night) {
  return stubs((req) => {
    // sgq asks a loopback address once whether it is its sandbox (a GET of /): it is not.
    if (req.method === 'GET') return { status: 404, body: {} };
    const { user, page } = JSON.parse(req.body) as { user: string; page: number };
    const rows = req.url.includes('score') ? night().scores : night().followers;
    return { text: JSON.stringify(envelope(page, null, [], 1000, user)).replace('"data":[]', `"data":[${rows.join(',')}]`) };
  });
}

/** Runs the five nights: followers and scores into one dataset, and each night's followers with -o parquet into its own file. */
async function fiveNights() {
  const dir = tempDir('sgq-dataset-');
  const files = tempDir('sgq-parquet-');
  let current = NIGHTS[0]!;
  const stub = await service(() => current);
  const stderr: string[] = [];
  for (const night of NIGHTS) {
    current = night;
    const env = { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k', SGQ_RETRIES: '0', SGQ_DATASET: dir };
    const now = () => new Date(`${night.day}T03:00:00Z`);
    const followers = await runSgq(['graph', 'followers', 'jack', '--all', '-o', 'parquet', '--out', join(files, `${night.day}.parquet`)], { env, now });
    expect(followers.code, followers.stderr).toBe(0);
    const scores = await runSgq(['alpha', 'score-history', 'jack', '--all', '-q'], { env, now });
    expect(scores.code, scores.stderr).toBe(0);
    stderr.push(followers.stderr);
  }
  return { dir, files, stderr };
}

describe('one schema per route: five nights read as one table', () => {
  it('DuckDB reads every declared column of every night with its declared type, every value exact', async () => {
    const { dir, files, stderr } = await fiveNights();
    const followers = all(`${dir}/records/route=graph.get_followers/*/*.parquet`);
    const types = await query(`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM ${followers})`);
    expect(Object.fromEntries(types.map((t) => [t.column_name, t.column_type]))).toMatchObject({
      query_user: 'VARCHAR',
      fetched_at: 'TIMESTAMP WITH TIME ZONE',
      follower_username: 'VARCHAR',
      follower_userid: 'BIGINT',
      follower_bio: 'VARCHAR',
      follower_num_followers: 'BIGINT',
      follower_last_tweet: 'TIMESTAMP WITH TIME ZONE',
      follower_last_checked: 'TIMESTAMP WITH TIME ZONE',
      // A field the description lacks: text, the same in every file that has it.
      follower_verified: 'VARCHAR',
      _unfit: 'VARCHAR',
    });
    // The query the user could not run.
    const recent = await query(`SELECT follower_username FROM ${followers} WHERE follower_last_tweet >= TIMESTAMPTZ '2025-03-05 00:00:00+00' - INTERVAL 5 YEAR ORDER BY 1`);
    expect(recent.map((r) => r.follower_username)).toEqual(['amy', 'cat', 'dan', 'eve', 'fay']);
    // Every digit of every id, in its column or (past BIGINT) in _unfit, exactly as sent.
    const ids = await query(`SELECT follower_username AS name, CAST(follower_userid AS VARCHAR) AS id, _unfit, follower_bio AS bio, follower_verified FROM ${followers} ORDER BY date, name`);
    expect(ids).toEqual([
      { name: 'amy', id: TWO_53_PLUS_1, _unfit: null, bio: '東京の猫 🐈‍⬛', follower_verified: null },
      { name: 'bob', id: '2', _unfit: null, bio: 'plain', follower_verified: null },
      { name: 'amy', id: TWO_53_PLUS_1, _unfit: null, bio: '東京の猫 🐈‍⬛', follower_verified: null },
      { name: 'cat', id: '3', _unfit: null, bio: 'Ἀθῆναι', follower_verified: null },
      { name: 'dan', id: null, _unfit: `{"follower_userid":${PAST_64_BITS}}`, bio: null, follower_verified: null },
      { name: 'eve', id: null, _unfit: `{"follower_userid":${TWO_63}}`, bio: null, follower_verified: null },
      { name: 'amy', id: TWO_53_PLUS_1, _unfit: null, bio: '👩🏽‍💻 코드', follower_verified: null },
      { name: 'fay', id: '5', _unfit: null, bio: 'x', follower_verified: 'true' },
    ]);
    const exact = await query(`SELECT coalesce(CAST(follower_userid AS VARCHAR), _unfit->>'follower_userid') AS id FROM ${followers} WHERE follower_username IN ('dan', 'eve') ORDER BY 1`);
    expect(exact.map((r) => r.id)).toEqual([PAST_64_BITS, TWO_63]);
    const instants = await query(`SELECT epoch_us(follower_last_tweet) AS us FROM ${followers} WHERE follower_username = 'cat'`);
    expect(instants).toEqual([{ us: String(Date.UTC(2025, 1, 28, 3) * 1000) }]);
    // Scores: one DECIMAL(38,23) in every file, whatever a night's values were.
    const scores = all(`${dir}/records/route=alpha.get_score_history/*/*.parquet`);
    const scoreTypes = await query(`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM ${scores})`);
    expect(Object.fromEntries(scoreTypes.map((t) => [t.column_name, t.column_type]))).toMatchObject({ score: 'DECIMAL(38,23)', _unfit: 'VARCHAR' });
    const values = await query(`SELECT CAST(score AS VARCHAR) AS score FROM ${scores} ORDER BY fetched_at, score`);
    expect(values.map((r) => r.score)).toEqual([
      '1.50000000000000000000000',
      '2.00000000000000000000000',
      '83.12345678901234567890123',
      '7.00000000000000000000000',
      '-0.00000000000000000000100',
      '83.12345678901234567890123',
    ]);
    // The value past BIGINT is said once a run for each destination (the -o parquet file, the dataset), on the night it came.
    expect(stderr.map((text) => (text.match(/does not fit/g) ?? []).length)).toEqual([0, 0, 2, 0, 0]);
    expect(stderr[2]).toMatch(/^sgq: parquet: follower_userid 18446744073709551617 does not fit its column \(BIGINT\): kept exactly in the column _unfit/m);
    expect(stderr[2]).toMatch(/^sgq: dataset: parquet: follower_userid 18446744073709551617 does not fit/m);
    // -o parquet: the nightly files of one route have the same types too.
    const outTypes = await query(`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet('${files}/*.parquet', union_by_name = true))`);
    expect(Object.fromEntries(outTypes.map((t) => [t.column_name, t.column_type]))).toMatchObject({ follower_last_tweet: 'TIMESTAMP WITH TIME ZONE', follower_userid: 'BIGINT', follower_bio: 'VARCHAR' });
    expect(readdirSync(files)).toHaveLength(5);
  }, 120_000);

  it('Polars scans the five nights as one frame: no type drifts between files', async () => {
    const { dir, files } = await fiveNights();
    const scan = (glob: string) => pl.scanParquet(glob, { hivePartitioning: false, missingColumns: 'insert', extraColumns: 'ignore' });
    const followers = scan(`${dir}/records/route=graph.get_followers/**/*.parquet`).select('follower_username', 'follower_userid', 'follower_last_tweet', 'follower_bio').collectSync();
    expect(String(followers.schema.follower_last_tweet)).toMatch(/Datetime/);
    expect(String(followers.schema.follower_userid)).toMatch(/Int64/);
    expect(followers.height).toBe(8);
    expect(followers.getColumn('follower_bio').toArray()).toContain('👩🏽‍💻 코드');
    const scores = scan(`${dir}/records/route=alpha.get_score_history/**/*.parquet`).select(pl.col('score').cast(pl.Utf8)).collectSync();
    expect(scores.getColumn('score').toArray()).toContain('83.12345678901234567890123');
    const out = scan(`${files}/*.parquet`).select('follower_last_tweet').collectSync();
    expect(out.height).toBe(8);
  }, 120_000);
});

/** A dataset of sgq 3.4.1 (test/fixtures/dataset-3.4.1: each file typed by its own values), as that version laid it out. */
function datasetOf341(): string {
  const dir = tempDir('sgq-dataset-');
  const version = join(dir, '.sgq', 'records', 'v1');
  mkdirSync(join(dir, '.sgq', 'staging'), { recursive: true });
  cpSync(fileURLToPath(new URL('../fixtures/dataset-3.4.1/records', import.meta.url)), version, { recursive: true });
  symlinkSync(join('.sgq', 'records', 'v1'), join(dir, 'records'));
  return dir;
}

describe('a dataset of sgq 3.4.1', () => {
  it('dataset info names its files whose types differ; compact rewrites them, and one read gives every declared type and every digit', async () => {
    const dir = datasetOf341();
    // A night of today's sgq in the same partition as a 3.4.1 file.
    const stub = await service(() => NIGHTS[1]!);
    const env = { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k', SGQ_RETRIES: '0' };
    const night = await runSgq(['graph', 'followers', 'jack', '--all', '--dataset', dir, '-q'], { env, now: () => new Date('2025-01-02T04:00:00Z') });
    expect(night.code, night.stderr).toBe(0);
    const followers = all(`${dir}/records/route=graph.get_followers/*/*.parquet`);
    const scores = all(`${dir}/records/route=alpha.get_score_history/*/*.parquet`);
    // What 3.4.1 left: the column's type depends on which files a query reads.
    const drifted = await query(`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM ${followers}) WHERE column_name IN ('follower_last_tweet', 'follower_userid')`);
    expect(drifted.map((t) => t.column_type)).toEqual(['VARCHAR', 'VARCHAR']);
    expect(() => pl.scanParquet(`${dir}/records/route=graph.get_followers/**/*.parquet`, { missingColumns: 'insert', extraColumns: 'ignore' }).collectSync()).toThrow(/data type mismatch/);

    const listed = await sgq(['dataset', 'info', dir, '--files', '-o', 'json']);
    expect(listed.exitCode, listed.stderr).toBe(0);
    const files = JSON.parse(listed.stdout) as { route: string; date: string; file: string; differs: string | null }[];
    expect(files.map((f) => [f.route, f.date, f.differs === null ? null : 'differs'])).toEqual([
      ['alpha.get_score_history', '2025-01-01', 'differs'],
      ['alpha.get_score_history', '2025-01-02', 'differs'],
      ['graph.get_followers', '2025-01-01', 'differs'],
      ['graph.get_followers', '2025-01-02', 'differs'],
      ['graph.get_followers', '2025-01-02', null],
    ]);
    expect(files[2]!.differs).toMatch(/^follower_last_tweet is VARCHAR, not TIMESTAMP WITH TIME ZONE$|^lacks the column/);
    expect(listed.stderr).toMatch(/4 files have columns other than their route's \(written by an older sgq\).*sgq dataset compact/);
    const partitionsBefore = JSON.parse((await sgq(['dataset', 'info', dir, '-o', 'json'])).stdout) as { differing: number }[];
    expect(partitionsBefore.map((p) => p.differing)).toEqual([1, 1, 1, 1]);

    const compact = await sgq(['dataset', 'compact', dir]);
    expect(compact.exitCode, compact.stderr).toBe(0);
    expect(compact.stderr).toMatch(/records route=graph\.get_followers date=2025-01-01: 1 file rewritten \(2 rows\) in the route's columns/);
    expect(compact.stderr).toMatch(/records route=graph\.get_followers date=2025-01-02: 2 files merged into 1 \(4 rows\), 1 of them rewritten/);
    // The 3.4.1 id past 64 bits (a VARCHAR there) does not fit BIGINT: kept in _unfit, and said.
    expect(compact.stderr).toMatch(/dataset compact: parquet: follower_userid 18446744073709551617 does not fit its column \(BIGINT\)/);

    const types = await query(`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM ${followers})`);
    expect(Object.fromEntries(types.map((t) => [t.column_name, t.column_type]))).toMatchObject({ follower_last_tweet: 'TIMESTAMP WITH TIME ZONE', follower_userid: 'BIGINT', follower_last_checked: 'TIMESTAMP WITH TIME ZONE', _unfit: 'VARCHAR' });
    const rows = await query(`SELECT follower_username AS name, CAST(follower_userid AS VARCHAR) AS id, _unfit, follower_bio AS bio, CAST(follower_last_tweet AS VARCHAR) AS last, epoch_us(follower_last_checked) AS checked FROM ${followers} ORDER BY date, fetched_at, name`);
    expect(rows).toEqual([
      { name: 'amy', id: TWO_53_PLUS_1, _unfit: null, bio: '東京 🐈', last: null, checked: '1735689600123456' },
      { name: 'bob', id: '2', _unfit: null, bio: 'plain', last: null, checked: '1735689600123456' },
      { name: 'amy', id: null, _unfit: `{"follower_userid":${PAST_64_BITS}}`, bio: '東京 🐈', last: '2024-12-31 23:59:59.999999+00', checked: '1735689600123456' },
      { name: 'cat', id: '3', _unfit: null, bio: 'Ἀθῆναι', last: '2020-02-29 12:00:00+00', checked: '1735689600123456' },
      { name: 'amy', id: TWO_53_PLUS_1, _unfit: null, bio: '東京の猫 🐈‍⬛', last: '2025-03-01 23:59:59.999999+00', checked: '1740787200123456' },
      { name: 'cat', id: '3', _unfit: null, bio: 'Ἀθῆναι', last: '2025-02-28 03:00:00+00', checked: '1740787200123456' },
    ]);
    // 3.4.1's DOUBLE scores read back as the decimals sent: 2.25, not 2.24999999999999989514240.
    const values = await query(`SELECT CAST(score AS VARCHAR) AS score FROM ${scores} ORDER BY fetched_at, score`);
    expect(values.map((r) => r.score)).toEqual(['1.50000000000000000000000', '83.12345678901234567890123', '2.25000000000000000000000', '7.00000000000000000000000']);
    const frame = pl.scanParquet(`${dir}/records/route=graph.get_followers/**/*.parquet`, { hivePartitioning: false }).select('follower_last_tweet', 'follower_userid').collectSync();
    expect(frame.height).toBe(6);

    const after = JSON.parse((await sgq(['dataset', 'info', dir, '--files', '-o', 'json'])).stdout) as { differs: string | null }[];
    expect(after.map((f) => f.differs)).toEqual([null, null, null, null]);
    // Nothing left to rewrite or merge.
    expect((await sgq(['dataset', 'compact', dir])).stderr).toMatch(/nothing to compact/);
  }, 120_000);

  it("dataset info --schema lists each route's columns and types, and the fields it does not declare", async () => {
    const dir = datasetOf341();
    const listed = await sgq(['dataset', 'info', dir, '--schema', '-o', 'json']);
    expect(listed.exitCode, listed.stderr).toBe(0);
    const columns = JSON.parse(listed.stdout) as { kind: string; route: string; column: string; type: string; source: string }[];
    const scores = columns.filter((c) => c.route === 'alpha.get_score_history').map((c) => [c.column, c.type, c.source]);
    expect(scores).toEqual([
      ['query_user', 'VARCHAR', 'sgq'],
      ['fetched_at', 'TIMESTAMP WITH TIME ZONE', 'sgq'],
      ['date', 'DATE', 'route'],
      ['score', 'DECIMAL(38,23)', 'route'],
      ['_unfit', 'VARCHAR', 'sgq'],
    ]);
    const followers = columns.filter((c) => c.route === 'graph.get_followers');
    expect(followers.find((c) => c.column === 'follower_last_tweet')).toMatchObject({ type: 'TIMESTAMP WITH TIME ZONE', source: 'route' });
    expect(followers).toHaveLength(2 + 24 + 1);
    const both = await sgq(['dataset', 'info', dir, '--schema', '--files']);
    expect(both.exitCode).toBe(2);
    expect(both.stderr.trim().split('\n')).toHaveLength(1);
  }, 60_000);
});
