import { join } from 'node:path';
import type { ColumnChunk, RowGroup } from 'hyparquet';
import { closeTemp, createTemp, discardTemp, sealTemp, writeAll } from '../../fs/atomic.js';
import { Bytes } from '../../parquet/byte-buffer.js';
import { MAGIC, writeFooter } from '../../parquet/footer.js';
import type { DatasetLayout } from './layout.js';
import type { PartFile } from './part-file.js';

// Several Parquet files of one schema as one: each row group's column chunks are copied byte
// for byte (no value decoded, so every type stays exact: decimals, ids past 2^53, text), and a
// new footer lists them at their new offsets. Row groups stay as their runs wrote them.

/** Writes the merged file under the dataset's staging folder, flushed to disk; returns its temporary path and rows. */
export async function mergeParts(parts: readonly PartFile[], layout: DatasetLayout): Promise<{ temp: string; rows: number }> {
  const { file: mode } = layout.modes;
  const temp = createTemp(join(layout.staging, 'compact.parquet'), mode);
  try {
    let offset = 0;
    const write = (bytes: Uint8Array) => {
      writeAll(temp.fd, bytes);
      offset += bytes.length;
    };
    const head = new Bytes(4);
    head.appendUint32(MAGIC);
    write(head.filled);
    const rowGroups: RowGroup[] = [];
    let rows = 0n;
    for (const part of parts) {
      for (const group of part.metadata.row_groups) {
        const start = offset;
        const columns: ColumnChunk[] = [];
        // One read per group, of the span its chunks cover (side by side in the files sgq writes).
        const ranges = group.columns.map(chunkRange);
        const first = Math.min(...ranges.map(([from]) => from));
        const span = part.read(first, Math.max(...ranges.map(([from, length]) => from + length)));
        group.columns.forEach((chunk, i) => {
          const [from, length] = ranges[i]!;
          const at = offset;
          write(span.subarray(from - first, from - first + length));
          columns.push(moved(chunk, BigInt(at - from)));
        });
        rowGroups.push({ columns, total_byte_size: group.total_byte_size, num_rows: group.num_rows, file_offset: BigInt(start), total_compressed_size: BigInt(offset - start) });
        rows += group.num_rows;
      }
    }
    const footer = new Bytes();
    writeFooter(footer, { schema: parts[0]!.schema, num_rows: rows, row_groups: rowGroups });
    write(footer.filled);
    sealTemp(temp.fd, { mode });
    closeTemp(temp);
    return { temp: temp.path, rows: Number(rows) };
  } catch (error) {
    discardTemp(temp);
    throw error;
  }
}

/** Where a column chunk's pages are: from its first page (the dictionary's, when it has one), for its compressed size. */
function chunkRange(chunk: ColumnChunk): [number, number] {
  const meta = chunk.meta_data;
  if (!meta || chunk.file_path) throw new Error('a column chunk without metadata, or in another file');
  const first = meta.dictionary_page_offset !== undefined && meta.dictionary_page_offset > 0n && meta.dictionary_page_offset < meta.data_page_offset ? meta.dictionary_page_offset : meta.data_page_offset;
  return [Number(first), Number(meta.total_compressed_size)];
}

/** The chunk's metadata at its new place; indexes and bloom filters stay behind (sgq writes none). */
function moved(chunk: ColumnChunk, shift: bigint): ColumnChunk {
  const meta = chunk.meta_data!;
  const { index_page_offset: _index, bloom_filter_offset: _bloom, bloom_filter_length: _length, ...kept } = meta;
  return {
    file_offset: chunk.file_offset + shift,
    meta_data: {
      ...kept,
      data_page_offset: meta.data_page_offset + shift,
      dictionary_page_offset: meta.dictionary_page_offset === undefined ? undefined : meta.dictionary_page_offset + shift,
      statistics: keptStatistics(meta),
    },
  };
}

/**
 * The chunk's statistics as they can be written again exactly: DECIMAL bounds come back from the
 * reader as doubles, so they are left out (a reader then scans those row groups rather than
 * trusting a rounded bound); the rest was read raw.
 */
function keptStatistics(meta: NonNullable<ColumnChunk['meta_data']>) {
  const stats = meta.statistics;
  if (!stats || meta.type !== 'FIXED_LEN_BYTE_ARRAY') return stats;
  return { null_count: stats.null_count };
}
