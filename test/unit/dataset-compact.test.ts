import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { JsonObject } from '../../src/core/classify.js';
import { copyIntoPlace } from '../../src/fs/atomic.js';
import { DatasetLayout } from '../../src/cli/dataset/layout.js';
import { DatasetStream } from '../../src/cli/dataset/stream.js';
import { loadParquet, ROW_GROUP } from '../../src/cli/output/parquet.js';
import { withDuckDb } from '../helpers/duckdb.js';
import { tempDir } from '../helpers/run.js';

// The dataset's modules called directly, read back with DuckDB as its users read it.

const query = (sql: string): Promise<Record<string, unknown>[]> =>
  withDuckDb(async (connection) => (await connection.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[]);
const records = (dir: string) => `read_parquet('${dir}/records/**/*.parquet', hive_partitioning=true, union_by_name=true)`;

/** One run's commit of `rows` to `dir`'s records, as a run does it. */
function run(layout: DatasetLayout, rows: JsonObject[], id: string): void {
  const stream = new DatasetStream({ layout, kind: 'records', route: 'graph.get_followers', date: '2025-01-31', runId: id }, () => undefined);
  mkdirSync(layout.staging, { recursive: true });
  stream.add(rows);
  stream.commit();
}

const rowsOf = (n: number, extra: JsonObject = {}) => Array.from({ length: n }, (_, i) => ({ id: i, name: `u${i}`, ...extra }));

beforeAll(async () => {
  await loadParquet();
});

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
