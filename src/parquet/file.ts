import type { RowGroup, SchemaElement } from 'hyparquet';
import { Bytes } from './byte-buffer.js';
import { ColumnChunk, type ColumnType } from './chunk.js';
import { MAGIC, writeFooter } from './footer.js';

/**
 * A Parquet file written a row group at a time: values are encoded into each column's chunk as
 * rows arrive, a full group's chunks go to `out` at once, the footer (schema, row groups) last.
 * Only the footer's list of row groups grows with the file.
 */
export class ParquetFile {
  private readonly bytes = new Bytes();
  private readonly chunks: ColumnChunk[];
  private readonly groups: RowGroup[] = [];
  private rows = 0n;

  constructor(
    columns: readonly { name: string; type: ColumnType }[],
    /** The footer's schema: the root, then one element per column. */
    private readonly schema: readonly SchemaElement[],
    private readonly out: (bytes: Uint8Array) => void,
    groupSize: number,
  ) {
    this.chunks = columns.map(({ name, type }) => new ColumnChunk(name, type, groupSize));
    this.bytes.appendUint32(MAGIC);
  }

  /** Column i's value of the next row (null for none): add() each column once per row. */
  column(i: number): ColumnChunk {
    return this.chunks[i]!;
  }

  /** The rows added since the last row group. */
  get pending(): number {
    return this.chunks[0]?.size ?? 0;
  }

  /** Ends the row group in progress (none when no row was added). */
  writeGroup(): void {
    const rows = this.pending;
    if (rows === 0) return;
    const start = this.bytes.offset;
    const chunks = this.chunks.map((chunk) => chunk.write(this.bytes));
    let size = 0n;
    for (const chunk of chunks) size += chunk.meta_data.total_uncompressed_size;
    this.groups.push({ columns: chunks, total_byte_size: size, num_rows: BigInt(rows), file_offset: BigInt(start), total_compressed_size: BigInt(this.bytes.offset - start) });
    this.rows += BigInt(rows);
    this.handOver();
  }

  /** The last row group, then the footer; the file is complete once `out` has taken it. */
  finish(): void {
    this.writeGroup();
    writeFooter(this.bytes, { schema: [...this.schema], num_rows: this.rows, row_groups: this.groups });
    this.handOver();
  }

  private handOver(): void {
    if (this.bytes.pos > 0) this.out(this.bytes.take());
  }
}
