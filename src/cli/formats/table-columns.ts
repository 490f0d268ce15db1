import { RECORD_FIELDS, TABLE_COLUMNS, type FieldKind, type RecordsName, type TableColumnSpec } from '../../core/record-fields.js';

// Which columns a table shows and how each reads, from the keys of its records alone, so that
// a route's run, `sgq api` of that route and `sgq fmt` of what it wrote print the same table.

/** A column of the table: the field it shows, its header, and how its cells read. */
export interface TableColumn {
  field: string;
  header: string;
  /** Never cut (a handle, an id, a number, a date): a column is left out first. */
  whole: boolean;
  /** A timestamp, shown as its date. */
  date: boolean;
  /** A count, aligned right. */
  right: boolean;
}

/** Fields sgq adds to records (several users; --changes and diff): shown first, as they are. */
const TAGS = ['query_user', 'change', 'renamed_from'];

/** Each described field's kind (a name means the same in every kind of record). */
const KINDS = new Map<string, FieldKind>();
for (const fields of Object.values(RECORD_FIELDS)) for (const [name, spec] of Object.entries(fields)) if (!KINDS.has(name)) KINDS.set(name, spec.kind);

/** Fields a default column keeps whole though they are text (handles, ids as strings). */
const WHOLE = new Set(Object.values(TABLE_COLUMNS).flatMap((columns) => columns.filter((c) => c.whole).flatMap((c) => c.fields)));

function column(field: string, header = field): TableColumn {
  const kind = KINDS.get(field);
  const numeric = kind === 'integer' || kind === 'number';
  return { field, header, whole: numeric || kind === 'datetime' || kind === 'date' || WHOLE.has(field), date: kind === 'datetime', right: numeric };
}

/**
 * The kind of record whose fields the keys are: the one describing most of them (the first of
 * a tie), if it describes three in four at least. Records of another API (`sgq api`, `sgq
 * fmt`) that share a name or two with a kind keep every field.
 */
function kindOf(keys: readonly string[]): RecordsName | undefined {
  let best: RecordsName | undefined;
  let most = 0;
  for (const [name, fields] of Object.entries(RECORD_FIELDS) as [RecordsName, object][]) {
    const described = keys.filter((k) => Object.hasOwn(fields, k)).length;
    if (described > most) [best, most] = [name, described];
  }
  return most * 4 >= keys.length * 3 ? best : undefined;
}

/** The default columns the records have; none when they have fewer than two (another shape). */
function defaults(specs: readonly TableColumnSpec[] | undefined, keys: ReadonlySet<string>): TableColumn[] {
  const chosen: TableColumn[] = [];
  for (const spec of specs ?? []) {
    const field = spec.fields.find((f) => keys.has(f));
    if (field !== undefined) chosen.push({ ...column(field, spec.header), whole: column(field).whole || spec.whole === true });
  }
  return chosen.length >= 2 ? chosen : [];
}

/**
 * The columns of a table of records with these keys (in order of first appearance): the
 * fields named by `--fields`; every field with `--wide`; else sgq's tags and then the default
 * columns of the kind of record (record-fields.ts), or every field when there are none.
 */
export function tableColumns(keys: readonly string[], options: { fields?: readonly string[]; wide?: boolean } = {}): TableColumn[] {
  if (options.fields) return options.fields.map((f) => column(f));
  if (options.wide) return keys.map((k) => column(k));
  const tags = TAGS.filter((t) => keys.includes(t));
  const own = keys.filter((k) => !TAGS.includes(k));
  const kind = kindOf(own);
  const chosen = defaults(kind && TABLE_COLUMNS[kind], new Set(own));
  return chosen.length ? [...tags.map((t) => column(t)), ...chosen] : keys.map((k) => column(k));
}
