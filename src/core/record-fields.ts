// The fields of each route's records, described once: the library's record types
// (record-types.ts), the route table's `records` and `sgq describe --schema` (src/cli/commands/describe/schemas.ts)
// all come from here. Every field is optional: the service may leave any out, and a graph
// route answers in one of two shapes (the spec's `username`/`last_checked`, or the prefixed
// `follower_…` fields the service's public clients read).

/** How a field's value is written in JSON. */
export type FieldKind = 'string' | 'integer' | 'number' | 'datetime' | 'date';

export interface FieldSpec {
  readonly kind: FieldKind;
  /** The service may send null. */
  readonly nullable?: boolean;
  readonly description: string;
}

export type FieldSpecs = { readonly [name: string]: FieldSpec };

/** A member of a follower or following list (spec §2.2 and the service's public clients). */
const RELATION = {
  username: { kind: 'string', description: 'the account: its handle' },
  userid: { kind: 'integer', description: 'the account: its numeric id (past 2^53 for most accounts: a bigint in the library)' },
  list_name: { kind: 'string', nullable: true, description: 'the account: its display name' },
  bio: { kind: 'string', nullable: true, description: 'the account: its bio' },
  location: { kind: 'string', nullable: true, description: 'the account: its location' },
  website: { kind: 'string', nullable: true, description: 'the account: its website' },
  num_followers: { kind: 'integer', description: 'the account: how many follow it' },
  num_friends: { kind: 'integer', description: 'the account: how many it follows' },
  num_tweets: { kind: 'integer', description: 'the account: how many posts it wrote' },
  last_tweet: { kind: 'datetime', nullable: true, description: 'the account: when it last posted' },
  creation_date: { kind: 'datetime', description: 'the account: when it was created' },
  last_checked: { kind: 'datetime', description: 'when the service last saw the relation (ISO 8601 with a UTC offset, microseconds)' },
} as const satisfies FieldSpecs;

type Prefixed<F extends FieldSpecs> = { readonly [K in keyof F & string as `follower_${K}`]: F[K] };

const prefixed = <F extends FieldSpecs>(fields: F): Prefixed<F> =>
  Object.fromEntries(Object.entries(fields).map(([name, spec]) => [`follower_${name}`, spec])) as Prefixed<F>;

/** The account a count is of: the route's one count comes beside these (names as in RELATION). */
const COUNTED = {
  username: RELATION.username,
  userid: RELATION.userid,
} as const satisfies FieldSpecs;

const CHECKED = { last_checked: { kind: 'datetime', description: 'when the service last saw the account (ISO 8601 with a UTC offset, microseconds)' } } as const satisfies FieldSpecs;

/**
 * The records of each kind of route. Beyond the graph routes the spec names no fields: the
 * service's public clients name those of followers, followed accounts, an account's metadata
 * and its past usernames; the rest are the ones sgq's sandbox serves, declared so that a
 * program sees what it may get.
 */
export const RECORD_FIELDS = {
  /** Followers: the prefixed fields of the service's shape, or the spec's plain ones. */
  followers: { ...RELATION, ...prefixed(RELATION) },
  /** Followed accounts: the same fields without the prefix. */
  following: RELATION,
  scores: {
    date: { kind: 'date', description: 'score history: the day (YYYY-MM-DD)' },
    score: { kind: 'number', description: 'score history: the score (decimals past a double\'s precision kept exactly)' },
  },
  metadata: {
    username: { kind: 'string', description: 'the account: its handle' },
    name: { kind: 'string', nullable: true, description: 'metadata history: the display name at the time' },
    description: { kind: 'string', nullable: true, description: 'metadata history: the bio at the time' },
    followers_count: { kind: 'integer', description: 'metadata history: followers at the time' },
    last_checked: { kind: 'datetime', description: 'when the service last saw the relation (ISO 8601 with a UTC offset, microseconds)' },
  },
  posts: {
    id: { kind: 'string', description: 'posts: the post\'s id' },
    text: { kind: 'string', description: 'posts: the text' },
    created_at: { kind: 'datetime', description: 'posts: when it was written' },
    like_count: { kind: 'integer', description: 'posts: its likes' },
  },
  userid: {
    username: { kind: 'string', description: 'the account: its handle' },
    user_id: { kind: 'string', description: 'user id: the account\'s numeric id, as a string of digits' },
  },
  /** An account's metadata (latest, current): the follower fields without the prefix, as the public clients read them. */
  account: RELATION,
  /** Past usernames: the two fields a public client types (`{username, last_checked}`). */
  pastUsernames: {
    username: { kind: 'string', description: 'past usernames: a handle the account had' },
    last_checked: { kind: 'datetime', description: 'past usernames: when the service last saw the account under it' },
  },
  /** The counts: no public client names their fields; the sandbox's follow the metadata's names. */
  followerCount: { ...COUNTED, num_followers: RELATION.num_followers, ...CHECKED },
  followingCount: { ...COUNTED, num_friends: RELATION.num_friends, ...CHECKED },
  tweetCount: { ...COUNTED, num_tweets: RELATION.num_tweets, ...CHECKED },
  /** No public client reads it: the sandbox's fields, its labels made up. */
  classification: {
    ...COUNTED,
    classification: { kind: 'string', description: 'classification: the class the service puts the account in' },
    ...CHECKED,
  },
  /** `/info` and the lists routes (placeholders for now): nothing is known of their fields. */
  open: {},
} as const satisfies Record<string, FieldSpecs>;

export type RecordsName = keyof typeof RECORD_FIELDS;

/**
 * A column of the table a person reads: a short header, and the fields it may show (the
 * first one the records have: a route's fields come prefixed or plain). `whole` marks text a
 * person copies and a cut would spoil (a handle); numbers and dates are never cut anyway.
 */
export interface TableColumnSpec {
  readonly header: string;
  readonly fields: readonly string[];
  readonly whole?: boolean;
}

const both = (name: string): string[] => [`follower_${name}`, name];

/** The account as a person scans it: who, what it is called, how big, since when. */
const ACCOUNT_COLUMNS: readonly TableColumnSpec[] = [
  { header: 'username', fields: both('username'), whole: true },
  { header: 'name', fields: [...both('list_name'), 'name'] },
  { header: 'followers', fields: [...both('num_followers'), 'followers_count'] },
  { header: 'following', fields: both('num_friends') },
  { header: 'posts', fields: both('num_tweets') },
  { header: 'created', fields: both('creation_date') },
];

/**
 * Each kind of record's default table columns, in the order shown (and kept: a narrow terminal
 * leaves out the last first). A kind without a list, or records that have fewer than two of
 * its columns (another shape), show every field. `--wide` and `--fields` show the rest.
 */
export const TABLE_COLUMNS: { readonly [R in RecordsName]?: readonly TableColumnSpec[] } = {
  followers: ACCOUNT_COLUMNS,
  following: ACCOUNT_COLUMNS,
  // A history: when each version was seen comes first.
  metadata: [{ header: 'checked', fields: ['last_checked'] }, ...ACCOUNT_COLUMNS],
  posts: [
    { header: 'created', fields: ['created_at'] },
    { header: 'likes', fields: ['like_count'] },
    { header: 'text', fields: ['text'] },
    { header: 'id', fields: ['id'], whole: true },
  ],
  scores: [
    { header: 'date', fields: ['date'] },
    { header: 'score', fields: ['score'] },
  ],
  userid: [
    { header: 'username', fields: ['username'], whole: true },
    { header: 'userid', fields: ['user_id'], whole: true },
  ],
};
