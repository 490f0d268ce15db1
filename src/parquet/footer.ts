import type { FileMetaData, LogicalType, RowGroup, SchemaElement } from 'hyparquet';
import type { Bytes } from './byte-buffer.js';
import { statisticsStruct } from './statistics.js';
import { writeStruct, type ThriftStruct } from './thrift.js';

// A Parquet file's footer and its pages' headers, in Thrift (parquet.thrift's field ids):
// what sgq writes (flat schemas of optional columns, data pages v2, GZIP or none) and what
// compaction copies from files sgq wrote before (merge-parts.ts). The enums are indices into
// the lists below, as in parquet.thrift.

/** "PAR1", at both ends of a Parquet file. */
export const MAGIC = 0x31524150;

const TYPES = ['BOOLEAN', 'INT32', 'INT64', 'INT96', 'FLOAT', 'DOUBLE', 'BYTE_ARRAY', 'FIXED_LEN_BYTE_ARRAY'];
const ENCODINGS = ['PLAIN', 'GROUP_VAR_INT', 'PLAIN_DICTIONARY', 'RLE', 'BIT_PACKED', 'DELTA_BINARY_PACKED', 'DELTA_LENGTH_BYTE_ARRAY', 'DELTA_BYTE_ARRAY', 'RLE_DICTIONARY', 'BYTE_STREAM_SPLIT'];
const REPETITIONS = ['REQUIRED', 'OPTIONAL', 'REPEATED'];
const CONVERTED = ['UTF8', 'MAP', 'MAP_KEY_VALUE', 'LIST', 'ENUM', 'DECIMAL', 'DATE', 'TIME_MILLIS', 'TIME_MICROS', 'TIMESTAMP_MILLIS', 'TIMESTAMP_MICROS', 'UINT_8', 'UINT_16', 'UINT_32', 'UINT_64', 'INT_8', 'INT_16', 'INT_32', 'INT_64', 'JSON', 'BSON', 'INTERVAL'];
const CODECS = ['UNCOMPRESSED', 'SNAPPY', 'GZIP', 'LZO', 'BROTLI', 'LZ4', 'ZSTD', 'LZ4_RAW'];
const PAGES = ['DATA_PAGE', 'INDEX_PAGE', 'DICTIONARY_PAGE', 'DATA_PAGE_V2'];

/** The footer's metadata as sgq gives it (the file's version and writer are sgq's). */
export type Footer = Pick<FileMetaData, 'schema' | 'num_rows' | 'row_groups'>;

/** The footer: the metadata, its length, then the closing magic. */
export function writeFooter(out: Bytes, { schema, num_rows, row_groups }: Footer): void {
  const start = out.offset;
  const element = elementByPath(schema);
  writeStruct(out, {
    1: 2,
    2: schema.map(schemaStruct),
    3: num_rows,
    4: row_groups.map((group) => rowGroupStruct(group, element)),
    6: 'sgq',
    // ColumnOrder: TYPE_ORDER for every column (min and max compare as their types do).
    7: schema.filter((e) => e.type).map(() => ({ 1: {} })),
  });
  out.appendUint32(out.offset - start);
  out.appendUint32(MAGIC);
}

export interface PageHeader {
  type: 'DICTIONARY_PAGE' | 'DATA_PAGE_V2';
  uncompressed_page_size: number;
  compressed_page_size: number;
  dictionary_page_header?: { num_values: number; encoding: 'PLAIN' };
  data_page_header_v2?: {
    num_values: number;
    num_nulls: number;
    num_rows: number;
    encoding: 'PLAIN' | 'RLE_DICTIONARY';
    definition_levels_byte_length: number;
    repetition_levels_byte_length: number;
    is_compressed: boolean;
  };
}

export function writePageHeader(out: Bytes, header: PageHeader): void {
  const dictionary = header.dictionary_page_header;
  const v2 = header.data_page_header_v2;
  writeStruct(out, {
    1: PAGES.indexOf(header.type),
    2: header.uncompressed_page_size,
    3: header.compressed_page_size,
    7: dictionary && { 1: dictionary.num_values, 2: ENCODINGS.indexOf(dictionary.encoding) },
    8: v2 && {
      1: v2.num_values,
      2: v2.num_nulls,
      3: v2.num_rows,
      4: ENCODINGS.indexOf(v2.encoding),
      5: v2.definition_levels_byte_length,
      6: v2.repetition_levels_byte_length,
      7: v2.is_compressed ? undefined : false, // true when left out
    },
  });
}

function schemaStruct(e: SchemaElement): ThriftStruct {
  return {
    // `&&`: an element with no type (the root) leaves the field out; BOOLEAN is 0.
    1: e.type && TYPES.indexOf(e.type),
    2: e.type_length,
    3: e.repetition_type && REPETITIONS.indexOf(e.repetition_type),
    4: e.name,
    5: e.num_children,
    6: e.converted_type && CONVERTED.indexOf(e.converted_type),
    7: e.scale,
    8: e.precision,
    9: e.field_id,
    10: logicalType(e.logical_type),
  };
}

function rowGroupStruct(group: RowGroup, element: (path: string[]) => SchemaElement): ThriftStruct {
  return {
    1: group.columns.map((c) => ({
      1: c.file_path,
      2: c.file_offset,
      3: c.meta_data && columnStruct(c.meta_data, element),
      4: c.offset_index_offset,
      5: c.offset_index_length,
      6: c.column_index_offset,
      7: c.column_index_length,
      9: c.encrypted_column_metadata,
    })),
    2: group.total_byte_size,
    3: group.num_rows,
    4: group.sorting_columns?.map((s) => ({ 1: s.column_idx, 2: s.descending, 3: s.nulls_first })),
    5: group.file_offset,
    6: group.total_compressed_size,
  };
}

type ColumnMeta = NonNullable<RowGroup['columns'][number]['meta_data']>;

function columnStruct(meta: ColumnMeta, element: (path: string[]) => SchemaElement): ThriftStruct {
  if (meta.geospatial_statistics) throw new Error('geospatial statistics: not a column sgq writes');
  const keyValues = meta.key_value_metadata?.map((kv) => ({ 1: kv.key, 2: kv.value }));
  const size = meta.size_statistics;
  return {
    1: TYPES.indexOf(meta.type),
    2: meta.encodings.map((e) => ENCODINGS.indexOf(e)),
    3: meta.path_in_schema,
    4: CODECS.indexOf(meta.codec),
    5: meta.num_values,
    6: meta.total_uncompressed_size,
    7: meta.total_compressed_size,
    8: keyValues,
    9: meta.data_page_offset,
    10: meta.index_page_offset,
    11: meta.dictionary_page_offset,
    12: meta.statistics && statisticsStruct(meta.statistics, element(meta.path_in_schema)),
    13: meta.encoding_stats?.map((s) => ({ 1: PAGES.indexOf(s.page_type), 2: ENCODINGS.indexOf(s.encoding), 3: s.count })),
    14: meta.bloom_filter_offset,
    15: meta.bloom_filter_length,
    16: size && { 1: size.unencoded_byte_array_data_bytes, 2: size.repetition_level_histogram, 3: size.definition_level_histogram },
  };
}

/** A column's schema element by its path: sgq's schemas are flat, a root and its columns (the first of a name). */
function elementByPath(schema: readonly SchemaElement[]): (path: string[]) => SchemaElement {
  const byName = new Map<string, SchemaElement>();
  for (const e of schema.slice(1)) if (!byName.has(e.name)) byName.set(e.name, e);
  return (path) => {
    const found = path.length === 1 ? byName.get(path[0]!) : undefined;
    if (!found) throw new Error(`parquet schema element not found: ${path.join('.')}`);
    return found;
  };
}

const UNITS = { MILLIS: 1, MICROS: 2, NANOS: 3 } as const;

/** parquet.thrift's LogicalType union: one field, by the type's id. */
function logicalType(type: LogicalType | undefined): ThriftStruct | undefined {
  if (!type) return undefined;
  const unit = (t: { unit: keyof typeof UNITS }) => ({ [UNITS[t.unit]]: {} });
  switch (type.type) {
    case 'DECIMAL':
      return { 5: { 1: type.scale, 2: type.precision } };
    case 'TIME':
      return { 7: { 1: type.isAdjustedToUTC, 2: unit(type) } };
    case 'TIMESTAMP':
      return { 8: { 1: type.isAdjustedToUTC, 2: unit(type) } };
    case 'INTEGER':
      return { 10: { 1: type.bitWidth, 2: type.isSigned } };
    default: {
      const id = EMPTY_LOGICAL[type.type];
      if (id === undefined) throw new Error(`the logical type ${type.type}: not a column sgq writes`);
      return { [id]: {} };
    }
  }
}

/** The logical types that carry nothing but their id. */
const EMPTY_LOGICAL: Partial<Record<LogicalType['type'], number>> = { STRING: 1, MAP: 2, LIST: 3, ENUM: 4, DATE: 6, NULL: 11, JSON: 12, BSON: 13, UUID: 14, FLOAT16: 15 };
