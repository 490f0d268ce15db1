// The library's record types, computed from the one description of the fields
// (record-fields.ts): a field described there is declared here with its type, optional;
// any other field stays readable as a JSON value.
import type { LosslessNumber, SgqValue } from './lossless.js';
import type { FieldSpec, FieldSpecs, RECORD_FIELDS, RecordsName } from './record-fields.js';

interface KindValues {
  string: string;
  /** A BigInt when past 2^53, exact to the digit. */
  integer: number | bigint;
  /** A LosslessNumber when a JS number would change it (a long decimal, `1.0`). */
  number: number | LosslessNumber;
  datetime: string;
  date: string;
}

export type FieldValue<F extends FieldSpec> = KindValues[F['kind']] | (F extends { nullable: true } ? null : never);

/** A record with the described fields typed, each optional, and every other field a JSON value. */
export type RecordOf<F extends FieldSpecs> = { [K in keyof F]?: FieldValue<F[K]> } & { [key: string]: SgqValue | undefined };

export type RecordNamed<N extends RecordsName> = RecordOf<(typeof RECORD_FIELDS)[N]>;

/** A follower: `follower_username`, `follower_userid` … (the service's shape) or `username`, `last_checked` (the spec's). */
export type FollowerRecord = RecordNamed<'followers'>;
/** A followed account: `username`, `userid`, `bio` … */
export type FollowingRecord = RecordNamed<'following'>;
export type ScoreRecord = RecordNamed<'scores'>;
export type MetadataRecord = RecordNamed<'metadata'>;
export type PostRecord = RecordNamed<'posts'>;
export type UseridRecord = RecordNamed<'userid'>;
/** An account's metadata (`metadata.latest`, `metadata.current`): `username`, `userid`, `bio` … */
export type AccountRecord = RecordNamed<'account'>;
/** A past username: `username`, `last_checked`. */
export type PastUsernameRecord = RecordNamed<'pastUsernames'>;
export type FollowerCountRecord = RecordNamed<'followerCount'>;
export type FollowingCountRecord = RecordNamed<'followingCount'>;
export type TweetCountRecord = RecordNamed<'tweetCount'>;
export type ClassificationRecord = RecordNamed<'classification'>;

/** An error record of `data` (spec §2.2), e.g. `{ "error": "no data for username = x" }`. */
export interface ErrorRecord {
  error: string;
}

/** The body of the 429 that says the subscription expired and the credits are spent (spec §2.4). */
export interface ExpiredBody {
  Error: string;
  /** The namespace/route called. */
  Endpoint: string;
  'Current credits': number | bigint;
}

/** The answer of a route that is not available yet (spec §2.3); it costs nothing. */
export interface PlaceholderAnswer {
  message: string;
}
