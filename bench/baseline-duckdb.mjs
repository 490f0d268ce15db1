// Baseline for `sgq diff OLD NEW`: DuckDB's anti-join of the same two NDJSON exports, both
// ways, by username, written as NDJSON to stdout (one line a change, as sgq diff prints them).
// Usage: node bench/baseline-duckdb.mjs OLD.ndjson NEW.ndjson
import { DuckDBInstance } from '@duckdb/node-api';

const [oldFile, newFile] = process.argv.slice(2);
const instance = await DuckDBInstance.create(':memory:');
const db = await instance.connect();
const read = (file) => `read_ndjson('${file.replaceAll("'", "''")}', columns = {username: 'VARCHAR', last_checked: 'VARCHAR'})`;
await db.run(`COPY (
  SELECT 'lost' AS change, o.* FROM ${read(oldFile)} o ANTI JOIN ${read(newFile)} n USING (username)
  UNION ALL
  SELECT 'gained' AS change, n.* FROM ${read(newFile)} n ANTI JOIN ${read(oldFile)} o USING (username)
) TO '/dev/stdout' (FORMAT json)`);
db.closeSync();
instance.closeSync();
