import type { DuckDBConnection } from '@duckdb/node-api';

// DuckDB, the reader users query sgq's Parquet with: every Parquet test reads through it.

/** Runs `use` on a fresh in-memory DuckDB, closed afterwards whatever happens. */
export async function withDuckDb<T>(use: (connection: DuckDBConnection) => Promise<T>): Promise<T> {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const db = await DuckDBInstance.create(':memory:');
  const connection = await db.connect();
  try {
    return await use(connection);
  } finally {
    connection.closeSync();
    db.closeSync();
  }
}

/**
 * Each column's type and every row of a Parquet file, in file order, as DuckDB reads it:
 * with `asText`, every value cast to VARCHAR (exact digits of decimals); else DuckDB's
 * values, timestamps as microseconds since 1970.
 */
export function readParquet(file: string, options: { asText: true }): Promise<{ types: Record<string, string>; rows: Record<string, string | null>[] }>;
export function readParquet(file: string, options?: { asText?: false }): Promise<{ types: Record<string, string>; rows: Record<string, unknown>[] }>;
export function readParquet(file: string, options: { asText?: boolean } = {}): Promise<{ types: Record<string, string>; rows: Record<string, unknown>[] }> {
  return withDuckDb(async (connection) => {
    const source = `read_parquet('${file.replaceAll("'", "''")}', file_row_number = true)`;
    const described = await connection.runAndReadAll(`DESCRIBE SELECT * EXCLUDE (file_row_number) FROM ${source}`);
    const types = Object.fromEntries(described.getRowObjects().map((r) => [String(r.column_name), String(r.column_type)]));
    const columns = options.asText ? Object.keys(types).map((c) => `CAST("${c}" AS VARCHAR) AS "${c}"`).join(', ') : '* EXCLUDE (file_row_number)';
    const read = await connection.runAndReadAll(`SELECT ${columns} FROM ${source} ORDER BY file_row_number`);
    const rows = read.getRowObjects().map((row) =>
      Object.fromEntries(Object.entries(row).map(([k, v]) => [k, v !== null && typeof v === 'object' && 'micros' in v ? (v as { micros: bigint }).micros : v])),
    );
    return { types, rows };
  });
}
