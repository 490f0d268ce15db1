import { ColumnChunk, type ColumnType } from './chunk.js';
import type { ParquetLib } from './hyparquet-pieces.js';

/** "PAR1", at both ends of a Parquet file. */
export const MAGIC = 0x31524150;

/** A file's footer: its metadata (the schema, the row groups), then the closing magic. */
export function writeFooter(lib: ParquetLib, bytes: InstanceType<ParquetLib['ByteWriter']>, schema: readonly object[], rows: bigint, groups: readonly object[]): void {
  lib.writeMetadata(bytes, { version: 2, created_by: 'sgq', schema, num_rows: rows, row_groups: groups } as never);
  bytes.appendUint32(MAGIC);
}

/**
 * A Parquet file written a row group at a time: values are encoded into each column's chunk as
 * rows arrive, a full group's chunks go to `out` at once, the footer (schema, row groups) last.
 * Only the footer's list of row groups grows with the file.
 */
export class ParquetFile {
  private readonly bytes: InstanceType<ParquetLib['ByteWriter']>;
  private readonly chunks: ColumnChunk[];
  private readonly groups: object[] = [];
  private rows = 0n;

  constructor(
    private readonly lib: ParquetLib,
    columns: readonly { name: string; type: ColumnType }[],
    /** The footer's schema: the root, then one element per column. */
    private readonly schema: readonly object[],
    private readonly out: (bytes: Uint8Array) => void,
    groupSize: number,
  ) {
    this.chunks = columns.map(({ name, type }) => new ColumnChunk(name, type, groupSize));
    this.bytes = new lib.ByteWriter();
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
    const chunks = this.chunks.map((chunk) => chunk.write(this.lib, this.bytes));
    let size = 0n;
    for (const chunk of chunks) size += chunk.meta_data.total_uncompressed_size;
    this.groups.push({ columns: chunks, total_byte_size: size, num_rows: BigInt(rows), file_offset: BigInt(start), total_compressed_size: BigInt(this.bytes.offset - start) });
    this.rows += BigInt(rows);
    this.handOver();
  }

  /** The last row group, then the footer; the file is complete once `out` has taken it. */
  finish(): void {
    this.writeGroup();
    writeFooter(this.lib, this.bytes, this.schema, this.rows, this.groups);
    this.handOver();
  }

  private handOver(): void {
    if (this.bytes.index === 0) return;
    this.out(new Uint8Array(this.bytes.buffer.slice(0, this.bytes.index)));
    this.bytes.index = 0;
  }
}
