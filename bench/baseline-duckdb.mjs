// Baseline for `sgq diff OLD NEW`: DuckDB's anti-join of the same two NDJSON exports, both
// ways, by username, written as NDJSON into OUT (one line a change, as `sgq diff --out` writes them).
// Usage: node bench/baseline-duckdb.mjs OLD.ndjson NEW.ndjson OUT.ndjson
import { DuckDBInstance } from '@duckdb/node-api';

const [oldFile, newFile, outFile] = process.argv.slice(2);
const instance = await DuckDBInstance.create(':memory:');
const db = await instance.connect();
const read = (file) => `read_ndjson('${file.replaceAll("'", "''")}', columns = {username: 'VARCHAR', last_checked: 'VARCHAR'})`;
await db.run(`COPY (
  SELECT 'lost' AS change, o.* FROM ${read(oldFile)} o ANTI JOIN ${read(newFile)} n USING (username)
  UNION ALL
  SELECT 'gained' AS change, n.* FROM ${read(newFile)} n ANTI JOIN ${read(oldFile)} o USING (username)
) TO '${outFile.replaceAll("'", "''")}' (FORMAT json)`);
db.closeSync();
instance.closeSync();
