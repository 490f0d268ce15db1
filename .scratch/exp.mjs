import { DuckDBInstance } from '@duckdb/node-api';
import pl from 'nodejs-polars';
import { mkdirSync } from 'node:fs';
const db = await DuckDBInstance.create(':memory:'); const c = await db.connect();
const d='/tmp/pl/ds/records/route=graph.get_followers';
for (const day of ['2025-01-01','2025-01-02','2025-01-03']) mkdirSync(`${d}/date=${day}`, {recursive:true});
await c.run(`COPY (SELECT 'a' AS query_user, 83.12345678901234567890123::DECIMAL(38,23) AS score, 1::BIGINT AS id, TIMESTAMPTZ '2020-01-01' AS t) TO '${d}/date=2025-01-01/a.parquet'`);
await c.run(`COPY (SELECT 'b' AS query_user, 2::DECIMAL(38,23) AS score, 2::BIGINT AS id, TIMESTAMPTZ '2020-01-01' AS t) TO '${d}/date=2025-01-02/a.parquet'`);
await c.run(`COPY (SELECT 3::BIGINT AS id, 'c' AS query_user, 3::DECIMAL(38,23) AS score, NULL::TIMESTAMPTZ AS t) TO '${d}/date=2025-01-03/a.parquet'`);
for (const opts of [{}, {hivePartitioning:true}, {allowMissingColumns:true}]) {
  try { const df = pl.scanParquet('/tmp/pl/ds/records/**/*.parquet', opts).collectSync(); console.log(JSON.stringify(opts), df.schema, df.toRecords()); } catch (e) { console.log(JSON.stringify(opts), 'ERR', String(e).slice(0,300)); }
}
