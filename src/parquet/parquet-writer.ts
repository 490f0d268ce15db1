import { unionKeys, type JsonObject } from '../core/classify.js';
import { stringifyJson, type Json } from '../core/json.js';
import { convert, declaredColumn, inferType, schemaElement, sqlType, textColumn, type Column } from './columns.js';
import { UNFIT, type Declared } from './declared.js';
import { ParquetFile } from './file.js';
import { KeyOrder, RowShape } from './row-shape.js';

// sgq's one Parquet writer: records in, the bytes of one file out, through a byte sink the
// caller gives (`-o parquet`'s output, a dataset part's temporary file). It knows no stream,
// no terminal and no path: what it writes goes to `out`, in order, synchronously.

/**
 * Rows per row group. A Parquet file states its columns before its data, so the first
 * group's records are held until they have named them (and, with no declared columns, typed
 * them); a group is buffered, so this bounds the memory.
 */
export const ROW_GROUP = 10_000;

export interface ParquetOptions {
  /** `--fields`: these columns, in this order. */
  fields?: readonly string[];
  warn?: (line: string) => void;
  /**
   * The route's columns (declared.ts): every file has each with its declared type, then
   * `_unfit`, then the fields the first row group brings that are not declared, as text.
   * Without them (a command with no route) the first row group's values type the columns.
   */
  declared?: readonly Declared[];
  /** The warnings already said, by key: a dataset's parts share one, so that each is said once a run. */
  said?: Set<string>;
}

/**
 * Values for every row of one write, as if each record carried them after its own fields (a
 * record's own field of that name is kept): a dataset's query_user and fetched_at. One that is a
 * column is stored once per run of rows (ColumnChunk.addMany): no copy of a record, no field
 * added to it, no conversion per row.
 */
export type RowConstants = Readonly<Record<string, Json>>;

/** Records from..end of an array, with the constants of their write. */
interface Batch {
  records: readonly JsonObject[];
  from: number;
  end: number;
  constants?: RowConstants;
}

/** How rows go into columns: declared (a value that does not fit goes to `_unfit`) or inferred (it is written as null). */
interface RowRule {
  columns: Column[];
  /** The names a record may bring without being a late key. */
  known: Set<string>;
  /** A record's values, the columns marked in `skip` left to the caller. */
  addRow(to: ParquetFile, r: JsonObject, skip?: readonly boolean[]): void;
}

type Report = (key: string, line: string) => void;

/**
 * One Parquet file, streamed: records are buffered a row group at a time, each group is
 * encoded and handed to `out`, and close() writes the footer. With declared columns a value
 * that does not fit its column and a key first seen after the first group are kept in
 * `_unfit`; without them the columns and types come from the first group (or `fields`), a
 * later key is left out and a value that does not fit is written as null. Each is reported
 * once, through `warn`.
 */
export class ParquetWriter {
  /** The first row group's records, kept until they have set the columns. */
  private first: Batch[] | undefined = [];
  private firstRows = 0;
  private rule?: RowRule;
  private file?: ParquetFile;
  private readonly report: Report;

  constructor(
    /** Takes each piece of the file, in order; the file is complete once close() has returned. */
    private readonly out: (bytes: Uint8Array) => void,
    private readonly options: ParquetOptions = {},
  ) {
    const said = options.said ?? new Set<string>();
    this.report = (key, line) => {
      if (said.has(key)) return;
      said.add(key);
      options.warn?.(line);
    };
  }

  /** Records, read and never changed; the array is kept until the first row group is written, so a caller must not change it. */
  write(records: readonly JsonObject[], constants?: RowConstants): void {
    this.take(records, 0, constants, false);
  }

  /**
   * Writes records from `from` up to the first that brings a key the columns lack (once the
   * first row group has set them; a constant counts as a key of each record) and returns its
   * index, or `records.length`: a dataset part ends there and the next part takes that record,
   * so the key becomes a column.
   */
  writeFitting(records: readonly JsonObject[], from: number, constants?: RowConstants): number {
    return this.take(records, from, constants, true);
  }

  /** The last row group and the footer: a Parquet file is readable only once they are written. */
  close(): void {
    this.file ??= this.open();
    this.file.finish();
  }

  private take(records: readonly JsonObject[], from: number, constants: RowConstants | undefined, fitting: boolean): number {
    for (let at = from; at < records.length; ) {
      if (!this.file) {
        const end = Math.min(records.length, at + ROW_GROUP - this.firstRows);
        this.first!.push({ records, from: at, end, constants });
        this.firstRows += end - at;
        if (this.firstRows >= ROW_GROUP) this.file = this.open();
        at = end;
        continue;
      }
      if (!fitting) {
        this.addRows(this.file, { records, from: at, end: records.length, constants });
        return records.length;
      }
      if (constants && !Object.keys(constants).every((key) => this.rule!.known.has(key))) return at;
      let end = at;
      while (end < records.length && this.fits(records[end]!)) end++;
      this.addRows(this.file, { records, from: at, end, constants });
      if (end < records.length) return end;
      at = end;
    }
    return records.length;
  }

  /** The keys, in order, of the last record found to fit: most records of a page have the same. */
  private fitKeys = new KeyOrder();

  private fits(r: JsonObject): boolean {
    if (this.fitKeys.same(r)) return true;
    // A record's own `_unfit` never becomes a column: it is kept inside sgq's.
    for (const key in r) if (!this.rule!.known.has(key) && key !== UNFIT) return false;
    this.fitKeys.take(r);
    return true;
  }

  private open(): ParquetFile {
    const batches = this.first!;
    const { fields, declared } = this.options;
    this.first = undefined;
    const rule = (this.rule = declared ? declaredRule(declared, fields, unionOf(batches), this.report) : inferredRule(fields, batches.flatMap(withConstants), this.report));
    const schema = [{ name: 'root', num_children: rule.columns.length }, ...rule.columns.map(schemaElement)];
    const opened = new ParquetFile(rule.columns, schema, this.out, ROW_GROUP);
    for (const batch of batches) this.addRows(opened, batch);
    return opened;
  }

  /** A batch's rows, a row group written whenever one fills; its constants once per run of rows where they can be. */
  private addRows(to: ParquetFile, batch: Batch): void {
    const rule = this.rule!;
    const { records, end } = batch;
    const fixed = batch.constants && fixedColumns(rule.columns, batch);
    for (let at = batch.from; at < end; ) {
      const n = Math.min(end - at, ROW_GROUP - to.pending);
      if (fixed) {
        for (let i = at; i < at + n; i++) rule.addRow(to, records[i]!, fixed.skip);
        for (const [index, stored] of fixed.values) to.column(index).addMany(stored, n);
      } else {
        for (let i = at; i < at + n; i++) rule.addRow(to, batch.constants ? withConstant(records[i]!, batch.constants) : records[i]!);
      }
      at += n;
      if (to.pending >= ROW_GROUP) to.writeGroup();
    }
  }
}

/** A record with the constants it lacks added after its own fields: the rows a batch stands for, where they cannot be written as constants. */
function withConstant(r: JsonObject, constants: RowConstants): JsonObject {
  const copy = { ...r };
  for (const key in constants) if (!Object.hasOwn(copy, key)) copy[key] = constants[key]!;
  return copy;
}

const withConstants = ({ records, from, end, constants }: Batch): JsonObject[] => records.slice(from, end).map((r) => (constants ? withConstant(r, constants) : r));

/** The keys of the batches' rows in the order they first appear (a constant's after its batch's first record's own). */
function unionOf(batches: readonly Batch[]): string[] {
  const keys = new Set<string>();
  const last = new KeyOrder();
  for (const { records, from, end, constants } of batches) {
    for (let i = from; i < end; i++) {
      // for-in, not Object.keys: no array made per record (a part's first 10,000 are read here);
      // a record of the same keys as the one before adds none.
      if (!last.same(records[i]!)) {
        for (const key in records[i]!) keys.add(key);
        last.take(records[i]!);
      }
      if (i === from && constants) for (const key in constants) keys.add(key);
    }
  }
  return [...keys];
}

/**
 * The columns a batch's constants fill, each value as stored, and the columns its records
 * leave to them; undefined (each record copied with them) when a constant names no column,
 * does not fit its column, or a record has a field of its own by that name.
 */
function fixedColumns(columns: readonly Column[], { records, from, end, constants }: Batch) {
  const skip = columns.map(() => false);
  const values: [number, unknown][] = [];
  for (const key in constants) {
    const index = columns.findIndex((c) => c.name === key);
    if (index < 0 || key === UNFIT) return undefined;
    const value = constants[key]!;
    const stored = value === null ? null : (convert(columns[index]!, value) ?? null);
    if (stored === null && value !== null) return undefined;
    for (let i = from; i < end; i++) if (Object.hasOwn(records[i]!, key)) return undefined;
    skip[index] = true;
    values.push([index, stored]);
  }
  return { skip, values };
}

/** The first values of a text, for a message. */
const excerpt = (value: Json): string => {
  const text = stringifyJson(value);
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
};

/**
 * Declared columns: `--fields`, or every declared column, `_unfit`, then the first group's
 * other keys as text (so that every file of a route begins with the same columns). A value
 * that does not fit its column, and a key no column has, are kept exactly in `_unfit`; the
 * first of each kind is said once.
 */
function declaredRule(declared: readonly Declared[], fields: readonly string[] | undefined, firstKeys: readonly string[], report: Report): RowRule {
  const kinds = new Map(declared.map((d) => [d.name, d.kind]));
  const column = (name: string) => (kinds.has(name) ? declaredColumn(name, kinds.get(name)!) : textColumn(name));
  const leading = (fields ?? [...kinds.keys()]).filter((name) => name !== UNFIT).map(column);
  const extras = fields ? [] : firstKeys.filter((key) => !kinds.has(key) && key !== UNFIT).map(textColumn);
  const columns = [...leading, textColumn(UNFIT), ...extras];
  const at = leading.length;
  const known = new Set(columns.map((c) => c.name));
  known.delete(UNFIT);
  const shape = RowShape.of(columns.map((c) => c.name), at);
  const addRow = (to: ParquetFile, r: JsonObject, skip?: readonly boolean[]): void => {
    const shaped = shape?.read(r);
    if (shaped && addShaped(to, skip)) return;
    addRead(to, r, skip);
    // Another key order becomes the shape; a value that did not fit leaves it as it is.
    if (shape && !shaped) shape.learn(r);
  };
  /** The values of a record the shape read, added when every one fits its column; false (nothing added) otherwise. */
  const stored: unknown[] = [];
  const addShaped = (to: ParquetFile, skip?: readonly boolean[]): boolean => {
    const { values, columnAt, absent, size } = shape!;
    // Every value converted before any is added: one that does not fit sends the record the general way, which says so.
    for (let k = 0; k < size; k++) {
      const value = values[k]!;
      if (skip?.[columnAt[k]!]) return false;
      const s = value === null ? null : convert(columns[columnAt[k]!]!, value);
      if (s === undefined || (s === null && value !== null)) return false;
      stored[k] = s;
    }
    for (let k = 0; k < size; k++) to.column(columnAt[k]!).add(stored[k]);
    for (const i of absent) if (!skip?.[i]) to.column(i).add(null);
    to.column(at).add(null);
    return true;
  };
  const addRead = (to: ParquetFile, r: JsonObject, skip?: readonly boolean[]): void => {
    let unfit: Record<string, Json> | undefined;
    for (let i = 0; i < columns.length; i++) {
      if (i === at || skip?.[i]) continue;
      const column = columns[i]!;
      const value = r[column.name];
      let stored: unknown = null;
      if (value !== null && value !== undefined) {
        stored = convert(column, value) ?? null;
        if (stored === null) {
          (unfit ??= {})[column.name] = value;
          report('unfit', `parquet: ${column.name} ${excerpt(value)} does not fit its column (${sqlType(column)}): kept exactly in the column ${UNFIT}, as JSON; later values that do not fit are not reported`);
        }
      }
      to.column(i).add(stored);
    }
    for (const key in r) {
      if (known.has(key)) continue;
      // Defined, not assigned: a `__proto__` key stays a key.
      Object.defineProperty((unfit ??= {}), key, { value: r[key], enumerable: true, writable: true, configurable: true });
      report(`+${key}`, `parquet: the field "${key}" first appeared after the columns were set: kept exactly in the column ${UNFIT}, as JSON`);
    }
    to.column(at).add(unfit ? stringifyJson(unfit) : null);
  };
  return { columns, known, addRow };
}

/** Inferred columns (a command with no route): typed by the first group; a value that does not fit is null, a later key left out. */
function inferredRule(fields: readonly string[] | undefined, first: readonly JsonObject[], report: Report): RowRule {
  const names = fields ?? unionKeys(first);
  const columns = names.map((name) => inferType(name, first.map((r) => r[name] ?? null)));
  const known = new Set(names);
  const addRow = (to: ParquetFile, r: JsonObject, skip?: readonly boolean[]): void => {
    for (let i = 0; i < columns.length; i++) {
      if (skip?.[i]) continue;
      const column = columns[i]!;
      const value = r[column.name];
      let stored: unknown = null;
      if (value !== null && value !== undefined) {
        stored = convert(column, value) ?? null;
        if (stored === null) report(column.name, `parquet: column "${column.name}" holds ${column.type} values; a later value ${stringifyJson(value).slice(0, 40)} does not fit and is written as null`);
      }
      to.column(i).add(stored);
    }
    for (const key in r) {
      if (!known.has(key)) report(`+${key}`, `parquet: column "${key}" first appeared after the column types were set and is left out; name it in --fields to keep it`);
    }
  };
  return { columns, known, addRow };
}
