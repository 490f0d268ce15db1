import { closeSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { JsonObject } from '../../core/classify.js';
import { createTemp, sealTemp, writeAll, type TempFile } from '../../fs/atomic.js';
import { parquetFormatter, ROW_GROUP } from '../output/parquet.js';
import type { Formatter } from '../output/formatter.js';
import type { Sink } from '../output/sink.js';

// One Parquet file of the dataset being written: a temporary file under .sgq/staging, fed a
// row group at a time by the same writer as `-o parquet` (so the columns are typed alike),
// sealed (footer, fsync) when the run commits, then renamed into its partition.

/** The dataset's files are meant for other programs (Spark, a sync to a bucket): readable by all, as a umask would allow. */
export const DATASET_FILE = 0o644;

export interface SealedPart {
  temp: string;
  rows: number;
}

export class PartWriter {
  private readonly temp: TempFile;
  private readonly formatter: Formatter;
  /** The keys the first row group has seen: it sets the columns of the whole file. */
  private readonly keys = new Set<string>();
  rows = 0;
  private closed = false;

  /** Creates the temporary file now, so that a folder that cannot be written is found before any request. */
  constructor(staging: string, warn: (line: string) => void) {
    this.temp = createTemp(join(staging, 'part.parquet'), DATASET_FILE);
    const fd = this.temp.fd;
    this.formatter = parquetFormatter(fileSink((chunk) => writeAll(fd, chunk)), undefined, warn);
  }

  /**
   * Whether `record`, the part's row `rows + pending` (`pending` records before it are not
   * written yet), fits the columns: within the first row group it does, and its keys join
   * them; past it, false when it brings a key they lack (a new part takes it).
   */
  fits(record: JsonObject, pending: number): boolean {
    if (this.rows + pending < ROW_GROUP) {
      for (const key in record) this.keys.add(key);
      return true;
    }
    for (const key in record) if (!this.keys.has(key)) return false;
    return true;
  }

  /** Writes records that fit (a full row group goes to the file at once: this may throw ENOSPC). */
  write(records: JsonObject[]): void {
    if (records.length === 0) return;
    this.rows += records.length;
    this.formatter.write(records, true);
  }

  /** Writes the footer and flushes the file to disk; the caller renames it into place. */
  seal(): SealedPart {
    try {
      this.formatter.end();
      sealTemp(this.temp.fd, { mode: DATASET_FILE });
    } finally {
      this.close();
    }
    return { temp: this.temp.path, rows: this.rows };
  }

  /** Forgets the part: its records are not kept. */
  discard(): void {
    this.close();
    rmSync(this.temp.path, { force: true });
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.temp.fd);
  }
}

/** What the Parquet writer needs of a sink: bytes written synchronously to the part's file. */
function fileSink(write: (chunk: Uint8Array) => void): Sink {
  return {
    write: (chunk) => write(typeof chunk === 'string' ? Buffer.from(chunk) : chunk),
    drain: async () => undefined,
    closed: false,
    finish: async () => undefined,
    streams: false,
    flushed: true,
    delivered: true,
  };
}
