import { closeSync } from 'node:fs';
import { join } from 'node:path';
import type { JsonObject } from '../classify.js';
import { createTemp, sealTemp, writeAll, type TempFile } from '../../fs/atomic.js';
import { ParquetWriter, type ParquetOptions, type RowConstants } from '../../parquet/parquet-writer.js';
import type { DatasetLayout } from './layout.js';
import { removeFile } from '../../fs/remove.js';

// One Parquet file of the dataset being written: a temporary file under .sgq/staging, fed a
// row group at a time by the same writer as `-o parquet`, in its route's declared columns
// (schema.ts), sealed (footer, fsync) when the run commits, then renamed into its partition.

export interface SealedPart {
  temp: string;
  rows: number;
}

export class PartWriter {
  private readonly temp: TempFile;
  private readonly parquet: ParquetWriter;
  private readonly mode: number;
  rows = 0;
  private closed = false;

  /** Creates the temporary file now, so that a folder that cannot be written is found before any request. */
  constructor(layout: DatasetLayout, columns: Pick<ParquetOptions, 'declared' | 'warn' | 'said'>) {
    this.mode = layout.modes.file;
    this.temp = createTemp(join(layout.staging, 'part.parquet'), this.mode);
    const fd = this.temp.fd;
    this.parquet = new ParquetWriter((bytes) => writeAll(fd, bytes), columns);
  }

  /**
   * Writes records from `from` up to the first that brings a key the columns lack (the first
   * row group sets the columns of the whole file) and returns its index, or `records.length`.
   * A full row group goes to the file at once: this may throw ENOSPC. `constants`: values of
   * every one of these rows (ParquetWriter's RowConstants).
   */
  write(records: readonly JsonObject[], from: number, constants?: RowConstants): number {
    const end = this.parquet.writeFitting(records, from, constants);
    this.rows += end - from;
    return end;
  }

  /** Writes the footer and flushes the file to disk; the caller renames it into place. */
  seal(): SealedPart {
    try {
      this.parquet.close();
      sealTemp(this.temp.fd, { mode: this.mode });
    } finally {
      this.close();
    }
    return { temp: this.temp.path, rows: this.rows };
  }

  /** Forgets the part: its records are not kept. */
  discard(): void {
    this.close();
    removeFile(this.temp.path);
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.temp.fd);
  }
}
