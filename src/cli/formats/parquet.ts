import { ParquetWriter, type ParquetOptions } from '../../parquet/parquet-writer.js';
import type { Formatter } from './formatter.js';
import type { Sink } from '../output/sink.js';

// `-o parquet`: sgq's Parquet writer (src/parquet) as a formatter, the file going to the sink.

/** Parquet as a formatter: each row group goes to the sink as it fills, the footer at the end. */
export function parquetFormatter(sink: Sink, options: ParquetOptions = {}): Formatter {
  const writer = new ParquetWriter((bytes) => sink.write(bytes), options);
  return {
    // A Parquet file is readable only once its footer is written, at the end.
    holdsUntilEnd: true,
    write: (records) => writer.write(records),
    end: () => writer.close(),
  };
}
