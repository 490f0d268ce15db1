import { DuckDBInstance } from '@duckdb/node-api';
const db = await DuckDBInstance.create(':memory:'); const c = await db.connect();
for (const f of process.argv.slice(2)) {
  const r = await c.runAndReadAll(`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet('${f}'))`);
  console.log(f.split('/').slice(-3).join('/'), r.getRowObjectsJson().map(x => `${x.column_name}:${x.column_type}`).join(', '));
}
