import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import pl from 'nodejs-polars';
import { describe, expect, it } from 'vitest';
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
