import { ExitCode, SgqError, usageError } from '../errors.js';

// Which field says who an account is. Churn compares accounts, not strings: an id survives a
// rename, a username does not. Follower records carry `follower_userid` and
// `follower_username`, following records `userid` and `username`, the spec's own example only
// `username`; `--key FIELD` names any other.

/** Fields holding an account's id, best first. */
export const ID_FIELDS = ['follower_userid', 'userid', 'user_id', 'id'] as const;
/** Fields holding an account's username, best first. */
export const NAME_FIELDS = ['follower_username', 'username'] as const;

/** The identity fields one record shows (non-null), or the one --key named. */
export interface Fields {
  id?: string;
  name?: string;
  /** The field --key named, when the record has it. */
  key?: string;
}

/** What a side of a diff shows: nothing when it has no records. */
export interface Glimpse {
  /** Whether it holds any record at all. */
  records: boolean;
  /** The identity fields of its first record that has one; undefined when none has. */
  fields?: Fields;
  /** The fields of its first record, to name in an error. */
  sample?: string[];
}

const present = (record: Record<string, unknown>, field: string) => record[field] !== undefined && record[field] !== null;

/** The identity fields of a record; undefined when it has none (or not the one --key named). */
export function fieldsOf(record: Record<string, unknown>, key?: string): Fields | undefined {
  if (key !== undefined) return present(record, key) ? { key } : undefined;
  const id = ID_FIELDS.find((f) => present(record, f));
  const name = NAME_FIELDS.find((f) => present(record, f));
  return id === undefined && name === undefined ? undefined : { id, name };
}

/** The field a snapshot of records like this one is keyed by: --key, else its id, else its username. */
export const snapshotField = (fields: Fields): string => (fields.key ?? fields.id ?? fields.name)!;

/** How two sides are matched: by which field on each, and how renames are seen. */
export interface Match {
  by: 'id' | 'name' | 'key';
  older: string;
  newer: string;
  /** The username fields, when matching by id: a same id under another name is a rename. */
  names?: { older: string; newer: string };
  /** Said on stderr: why a weaker match than an id was used. */
  note?: string;
}

const CANDIDATES = [...ID_FIELDS, ...NAME_FIELDS].join(', ');

// The option that names the identity field (the CLI's --key).
const KEY = { option: 'key', fix: 'name-key-field' } as const;

/** The error of a side whose records have no identity: a usage error for --key, else exit 3. */
export function noIdentity(where: string, key: string | undefined, sample: string[] | undefined): SgqError {
  const has = sample?.length ? ` (its first record has ${sample.slice(0, 8).join(', ')}${sample.length > 8 ? ', …' : ''})` : '';
  if (key !== undefined) return usageError(`${where}: no record has the field "${key}" that key names${has}`, 'name a field the records have as the key', KEY);
  return new SgqError(ExitCode.config, `${where}: no record has an id or username field (${CANDIDATES})${has}`, 'name the field that identifies an account as the key', KEY);
}

/**
 * Chooses how to match two sides: the --key field on both; else ids when both have them,
 * else usernames (an export or snapshot of sgq before 2.3, or of the spec's shape, has no
 * id). A side without records matches anything.
 */
export function chooseMatch(older: Glimpse & { where: string }, newer: Glimpse & { where: string }, key?: string): Match {
  for (const side of [older, newer]) if (side.records && !side.fields) throw noIdentity(side.where, key, side.sample);
  if (key !== undefined) return { by: 'key', older: key, newer: key };
  const a = older.fields ?? newer.fields ?? { name: 'username' };
  const b = newer.fields ?? a;
  if (a.id && b.id) {
    const names = a.name && b.name ? { older: a.name, newer: b.name } : undefined;
    return { by: 'id', older: a.id, newer: b.id, names };
  }
  if (a.name && b.name) {
    const without = !a.id && b.id ? older.where : a.id && !b.id ? newer.where : undefined;
    const note = without && `matched by username: ${without} has no account ids, so a renamed account shows as one lost and one gained`;
    return { by: 'name', older: a.name, newer: b.name, note };
  }
  throw new SgqError(
    ExitCode.config,
    `${older.where} and ${newer.where} share no identity field (${a.id ?? a.name} and ${b.id ?? b.name}): nothing to match accounts by`,
    'name a field both have as the key',
    KEY,
  );
}
