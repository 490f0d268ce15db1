// hyparquet-writer, loaded with Parquet only. sgq encodes the column chunks itself
// (src/parquet/chunk.ts: one pass over each column, no object per value) and takes from the
// package the parts of a file that are written once per page or per file: the page headers
// and the footer in Thrift, and the RLE/bit-packed hybrid of levels and indices.
// The build maps these subpaths onto the one vendor file (scripts/build.mjs).

export interface ParquetLib {
  ByteWriter: typeof import('hyparquet-writer/src/bytewriter.js').ByteWriter;
  writePageHeader: typeof import('hyparquet-writer/src/datapage.js').writePageHeader;
  writeMetadata: typeof import('hyparquet-writer/src/metadata.js').writeMetadata;
  writeRleBitPackedHybrid: typeof import('hyparquet-writer/src/encoding.js').writeRleBitPackedHybrid;
}

let lib: ParquetLib | undefined;

export async function loadParquet(): Promise<ParquetLib> {
  if (lib) return lib;
  const [{ ByteWriter }, { writePageHeader }, { writeMetadata }, { writeRleBitPackedHybrid }] = await Promise.all([
    import('hyparquet-writer/src/bytewriter.js'),
    import('hyparquet-writer/src/datapage.js'),
    import('hyparquet-writer/src/metadata.js'),
    import('hyparquet-writer/src/encoding.js'),
  ]);
  lib = { ByteWriter, writePageHeader, writeMetadata, writeRleBitPackedHybrid };
  return lib;
}

/** The library, once loadParquet() has run (a ParquetWriter is made synchronously). */
export function parquetLib(): ParquetLib {
  if (!lib) throw new Error('loadParquet() must run before Parquet is written');
  return lib;
}
