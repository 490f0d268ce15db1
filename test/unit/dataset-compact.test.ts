import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../src/core/classify.js';
import { copyIntoPlace } from '../../src/fs/atomic.js';
import { sweepLeftovers } from '../../src/fs/sweep.js';
import { hostTag } from '../../src/fs/temp-names.js';
import { DatasetCheckpoint } from '../../src/cli/dataset/dataset-checkpoint.js';
import { compactDataset } from '../../src/core/dataset/compact.js';
import { DatasetLayout } from '../../src/core/dataset/layout.js';
import { DatasetStream } from '../../src/core/dataset/stream.js';
import { datasetSchema } from '../../src/core/dataset/schema.js';
import { ROW_GROUP } from '../../src/parquet/parquet-writer.js';
import { parseJson } from '../../src/core/json.js';
import { withDuckDb } from '../helpers/duckdb.js';
import { tempDir } from '../helpers/run.js';

// The dataset's modules called directly, read back with DuckDB as its users read it.

const query = (sql: string): Promise<Record<string, unknown>[]> =>
  withDuckDb(async (connection) => (await connection.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[]);
const lockOptions = { waitMs: 0 };
const records = (dir: string) => `read_parquet('${dir}/records/**/*.parquet', hive_partitioning=true, union_by_name=true)`;

/** One run's commit of `rows` to `dir`'s records, as a run does it. */
function run(layout: DatasetLayout, rows: JsonObject[], id: string, route = 'graph.get_followers'): void {
  const stream = new DatasetStream({ layout, kind: 'records', route, date: '2025-01-31', runId: id }, { declared: datasetSchema(route, 'records') });
  mkdirSync(layout.staging, { recursive: true });
  stream.add(rows);
  stream.cut();
  stream.commit();
}

const rowsOf = (n: number, extra: JsonObject = {}) => Array.from({ length: n }, (_, i) => ({ id: i, name: `u${i}`, ...extra }));

describe('DatasetStream', () => {
  it('a column first seen past the first row group within one batch starts a new part, and is kept', async () => {
    const dir = tempDir('sgq-dataset-');
    const layout = new DatasetLayout(dir);
    const rows: JsonObject[] = rowsOf(ROW_GROUP + 10);
    rows[ROW_GROUP + 5] = { ...rows[ROW_GROUP + 5]!, late: 'here' };
    run(layout, rows, 'run1');
    const found = await query(`SELECT count(*) AS n, count(late) AS late FROM ${records(dir)}`);
    expect(found).toEqual([{ n: String(ROW_GROUP + 10), late: '1' }]);
    expect(readdirSync(join(dir, 'records', 'route=graph.get_followers', 'date=2025-01-31'))).toHaveLength(2);
  });

  it('a column first seen within the first row group joins the columns: one part', async () => {
    const dir = tempDir('sgq-dataset-');
    const layout = new DatasetLayout(dir);
    const rows: JsonObject[] = rowsOf(30);
    rows[20] = { ...rows[20]!, late: 'here' };
    run(layout, rows.slice(0, 10), 'run1');
    run(layout, rows, 'run2');
    expect(await query(`SELECT count(*) AS n, count(late) AS late FROM ${records(dir)}`)).toEqual([{ n: '40', late: '1' }]);
    expect(readdirSync(join(dir, 'records', 'route=graph.get_followers', 'date=2025-01-31'))).toHaveLength(2);
  });
});

describe('compactDataset', () => {
  it('a partition with files of two schemas: both groups merge and no row is lost', async () => {
    const dir = tempDir('sgq-dataset-');
    const layout = new DatasetLayout(dir);
    run(layout, rowsOf(3), 'run1');
    run(layout, rowsOf(4), 'run2');
    run(layout, rowsOf(5, { verified: true }), 'run3');
    run(layout, rowsOf(6, { verified: false }), 'run4');
    const merged = await compactDataset(layout, undefined, lockOptions);
    expect(merged.map((m) => [m.files, m.rows])).toEqual([
      [2, 7],
      [2, 11],
    ]);
    expect(await query(`SELECT verified, count(*) AS n FROM ${records(dir)} GROUP BY ALL ORDER BY 1 NULLS FIRST`)).toEqual([
      { verified: null, n: '7' },
      { verified: 'false', n: '6' },
      { verified: 'true', n: '5' },
    ]);
    expect(readdirSync(join(dir, 'records', 'route=graph.get_followers', 'date=2025-01-31'))).toHaveLength(2);
    expect(readdirSync(layout.staging)).toEqual([]);
  });

  it('merges files of every type by copying their column chunks: decimals, ids past 2^53, timestamps and text exact, statistics kept', async () => {
    const dir = tempDir('sgq-dataset-');
    const layout = new DatasetLayout(dir);
    // Declared columns of the followers (BIGINT ids, timestamps, text) and a field they lack (text); a decimal in the scores'.
    const line = (i: number) =>
      `{"follower_userid":${9007199254740993n + BigInt(i)},"ok":${i % 2 === 0},"follower_last_checked":"2026-11-2${i % 9}T03:15:00.00000${i % 10}Z","follower_username":"東京 😀 ${i}","follower_location":"${i % 3 ? 'Berlin' : 'Osaka'}","follower_num_followers":${i % 5 ? i : null}}`;
    const score = (i: number) => `{"date":"2025-01-${String((i % 28) + 1).padStart(2, '0')}","score":123456789012345.${String(i % 1000).padStart(3, '0')}1}`;
    const batch = (from: number, count: number, make = line) => Array.from({ length: count }, (_, k) => parseJson(make(from + k)) as JsonObject);
    run(layout, batch(0, 7), 'run1');
    run(layout, batch(7, ROW_GROUP + 3), 'run2');
    run(layout, batch(ROW_GROUP + 10, 5), 'run3');
    for (const [n, from] of [1, 2, 3].entries()) run(layout, batch(from * 10, 10, score), `run${n + 4}`, 'alpha.get_score_history');
    const table = `read_parquet('${dir}/records/route=graph.get_followers/**/*.parquet')`;
    const everything = `SELECT follower_userid::VARCHAR AS id, ok, follower_last_checked::VARCHAR AS seen, follower_username AS name, follower_location AS "where", follower_num_followers AS n FROM ${table} ORDER BY id`;
    const scores = `SELECT score::VARCHAR AS score, date::VARCHAR AS date FROM read_parquet('${dir}/records/route=alpha.get_score_history/**/*.parquet', hive_partitioning = false) ORDER BY score`;
    const scoresBefore = await query(scores);
    const before = await query(everything);
    const stats = `SELECT path_in_schema, min(stats_min_value) AS lo, max(stats_max_value) AS hi FROM parquet_metadata('${dir}/records/**/*.parquet') GROUP BY ALL ORDER BY 1`;
    const statsBefore = await query(stats);
    const merged = await compactDataset(layout, undefined, lockOptions);
    expect(merged.map((m) => [m.route, m.files, m.rows, m.kept])).toEqual([['alpha.get_score_history', 3, 30, 0], ['graph.get_followers', 3, ROW_GROUP + 15, 0]]);
    expect(readdirSync(join(dir, 'records', 'route=graph.get_followers', 'date=2025-01-31'))).toHaveLength(1);
    expect(await query(everything)).toEqual(before);
    expect(before).toHaveLength(ROW_GROUP + 15);
    expect(before[0]).toMatchObject({ id: '9007199254740993', ok: 'true', name: '東京 😀 0', seen: '2026-11-20 03:15:00+00' });
    expect(await query(scores)).toEqual(scoresBefore);
    expect(scoresBefore[0]).toEqual({ score: '123456789012345.01010000000000000000000', date: '2025-01-11' });
    // Every bound survives but the decimal's, which the reader would have rounded.
    const statsAfter = await query(stats);
    expect(statsAfter.filter((s) => s.path_in_schema !== 'score')).toEqual(statsBefore.filter((s) => s.path_in_schema !== 'score'));
    expect(statsAfter.find((s) => s.path_in_schema === 'score')).toMatchObject({ lo: null, hi: null });
  });

  it('a half-built version a failed compaction left goes; the version readers use stays', async () => {
    const dir = tempDir('sgq-dataset-');
    const layout = new DatasetLayout(dir);
    run(layout, rowsOf(3), 'run1');
    run(layout, rowsOf(4), 'run2');
    // v1 is current; v2 is what a failed compaction left half-built.
    mkdirSync(join(layout.versions('records'), 'v2', 'route=graph.get_followers'), { recursive: true });
    await compactDataset(layout, undefined, lockOptions);
    expect(layout.current('records')).toBe(join(layout.versions('records'), 'v3'));
    expect(layout.versionNumbers('records')).toEqual([1, 3]);
    expect(await query(`SELECT count(*) AS n FROM read_parquet('${layout.versions('records')}/v1/**/*.parquet')`)).toEqual([{ n: '7' }]);
    expect(await query(`SELECT count(*) AS n FROM ${records(dir)}`)).toEqual([{ n: '7' }]);
    // The next compaction keeps v3 (the link's) and its own v4 only.
    run(layout, rowsOf(5), 'run3');
    await compactDataset(layout, undefined, lockOptions);
    expect(layout.versionNumbers('records')).toEqual([3, 4]);
    expect(await query(`SELECT count(*) AS n FROM ${records(dir)}`)).toEqual([{ n: '12' }]);
  });
});

describe('the staging folder', () => {
  const temp = (pid: number, host: string) => `.part.parquet.sgq-${pid}-0123abcd-${host}.tmp`;
  const DEAD = 2 ** 22 + 12_345;

  it('a run sweeps only its host’s temporary files whose pid is dead: another host’s, however old, may be live', async () => {
    const dir = tempDir('sgq-dataset-');
    const staging = join(dir, '.sgq', 'staging');
    mkdirSync(staging, { recursive: true });
    const other = hostTag() === 'ffffffff' ? 'eeeeeeee' : 'ffffffff';
    for (const name of [temp(DEAD, hostTag()), temp(DEAD, other), temp(process.pid, hostTag())]) {
      writeFileSync(join(staging, name), 'x');
      utimesSync(join(staging, name), new Date(0), new Date(0));
    }
    const dataset = await DatasetCheckpoint.open({
      dir,
      route: 'graph.get_followers',
      startedAt: new Date(),
      reporter: { warn: () => undefined, info: () => undefined, error: () => undefined, trace: () => undefined },
      stop: () => undefined,
      lockOptions: {},
      owner: { service: 'sandbox', profile: 'default' },
    });
    const left = readdirSync(staging);
    await dataset.close();
    expect(left).toContain(temp(DEAD, other));
    expect(left).toContain(temp(process.pid, hostTag()));
    expect(left).not.toContain(temp(DEAD, hostTag()));
  });

  it('sweepLeftovers without the option still takes another host’s stale files', () => {
    const folder = tempDir('sgq-sweep-');
    const other = hostTag() === 'ffffffff' ? 'eeeeeeee' : 'ffffffff';
    writeFileSync(join(folder, temp(DEAD, other)), 'x');
    utimesSync(join(folder, temp(DEAD, other)), new Date(0), new Date(0));
    sweepLeftovers(folder);
    expect(readdirSync(folder)).toEqual([]);
  });
});

describe('copyIntoPlace', () => {
  it('copies to the target through a temporary file, with the mode given, leaving no temporary file', () => {
    const folder = tempDir('sgq-copy-');
    writeFileSync(join(folder, 'from'), 'bytes');
    mkdirSync(join(folder, 'sub'));
    copyIntoPlace(join(folder, 'from'), join(folder, 'sub', 'to'), 0o644);
    expect(readFileSync(join(folder, 'sub', 'to'), 'utf8')).toBe('bytes');
    expect(readdirSync(join(folder, 'sub'))).toEqual(['to']);
    if (process.platform !== 'win32') expect(statSync(join(folder, 'sub', 'to')).mode & 0o777).toBe(0o644);
    expect(() => copyIntoPlace(join(folder, 'missing'), join(folder, 'sub', 'other'))).toThrow();
    expect(existsSync(join(folder, 'sub', 'other'))).toBe(false);
    expect(readdirSync(join(folder, 'sub'))).toEqual(['to']);
  });
});
