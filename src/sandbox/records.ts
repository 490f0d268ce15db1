// The records the sandbox serves, in one of two shapes:
// - 'service': the shape public clients of the real service read. Followers carry prefixed
//   fields (`follower_username`, `follower_userid` …), followed accounts the same names
//   without the prefix; ids past 2^53 are bare JSON integers; names and bios are in every
//   script, with emoji, tabs, newlines and nulls, as real profiles are.
// - 'spec': the two ASCII fields of the spec's only example (`username`, `last_checked`).
// Every value derives from the account name and the record's index, so a list is the same on
// every call, and a record costs a few table look-ups (the bench exports 200,000 of them).

import { isoMicros } from './data.js';

export type { Shape } from './shapes.js';

/**
 * A record already written as JSON text: the service's records hold tokens JSON.stringify
 * cannot write (integers past 2^53, long decimals), and writing them from text tables is
 * what keeps a 500-record page of them cheap.
 */
export class JsonText {
  constructor(readonly text: string) {}
}

// Stands for the records in the envelope's text until they are put in place.
const DATA_MARK = '\uE000data\uE000';

/** The JSON text of an answer whose `data` may hold JsonText records. */
export function bodyText(body: unknown): string {
  const data = (body as { data?: unknown }).data;
  if (!Array.isArray(data) || !(data[0] instanceof JsonText)) return JSON.stringify(body);
  const text = JSON.stringify({ ...(body as object), data: DATA_MARK });
  return text.replace(`"${DATA_MARK}"`, () => `[${(data as JsonText[]).map((r) => r.text).join(',')}]`);
}

// Display names in many scripts, with what makes a table or a YAML writer stumble: wide
// characters, right-to-left text, ZWJ emoji sequences, flags, combining marks, zero-width
// characters, quotes, and strings a YAML 1.1 reader takes for other types.
const NAMES = [
  '山田 太郎',
  '李小龍 Bruce',
  'キム・ミンジ 🌸',
  '김민지',
  'محمد العلي',
  'प्रिया शर्मा',
  'Анна Петрова',
  'Zoe\u0308 Lambert',
  'Jose\u0301 María',
  '👩‍💻 dev',
  '🇯🇵🇧🇷 travel',
  'Family 👨‍👩‍👧‍👦',
  'thumbs 👍🏽',
  'zero\u200Bwidth',
  'Ali "the quote", Jr.',
  'yes',
  'NO',
  '007',
  'null',
  'plain name',
  'שרה כהן',
  'Ελένη',
  'Nguyễn Văn An',
  'ok',
];

const BIOS: (string | null)[] = [
  null,
  'Coffee, code and cats ☕',
  'line one\nline two',
  'tab\tseparated\tbio',
  '东京在住。写真とラーメンが好き 🍜',
  'مطور برمجيات | القاهرة',
  'फ़ोटोग्राफ़र और यात्री',
  'Люблю книги и горы 🏔️',
  'on',
  '2024-04-07',
  '',
  'emoji only: 🏳️‍🌈🏴‍☠️👩🏿‍🔬',
  'a backslash \\ and a "quote"',
  'e\u0301te\u0301 a\u0300 Paris',
  null,
  'true',
];

const LOCATIONS: (string | null)[] = [null, 'Tokyo, Japan', 'القاهرة', 'Москва', 'São Paulo 🇧🇷', 'NO', 'Earth', null, 'मुंबई', 'Berlin\tDE'];
const WEBSITES: (string | null)[] = [null, 'https://example.com', null, 'https://例え.jp/パス', 'http://example.org/?a=1&b=2', null];

/** The pools as JSON text, encoded once. */
const json = (pool: readonly (string | null)[]): string[] => pool.map((v) => JSON.stringify(v));
const NAMES_JSON = json(NAMES);
const BIOS_JSON = json(BIOS);
const LOCATIONS_JSON = json(LOCATIONS);
const WEBSITES_JSON = json(WEBSITES);

/** Creation dates from 2007 to 2023 and last posts from 2023 to 2025 (before any clock a test sets), written once (a date a record costs). */
const dates = (from: number, years: number) => Array.from({ length: 256 }, (_, k) => `"${isoMicros(Date.UTC(from + (k % years), (k * 7) % 12, 1 + ((k * 13) % 28), (k * 5) % 24, (k * 11) % 60), 0)}"`);
const CREATED = dates(2007, 17);
const LAST_TWEET = dates(2023, 3);

const FIELDS = [
  'username',
  'userid',
  'list_name',
  'bio',
  'location',
  'website',
  'num_followers',
  'num_friends',
  'num_tweets',
  'last_tweet',
  'creation_date',
  'last_checked',
] as const;

/** The field names of a relation's records: `follower_username` … for followers, `username` … for following. */
export const relationFields = (relation: 'followers' | 'following'): readonly string[] =>
  relation === 'followers' ? FIELDS.map((f) => `follower_${f}`) : FIELDS;

const PREFIXED = relationFields('followers');

/** A 32-bit mix of a list's seed and an index, so neighbours differ in every field. */
const mix = (seed: number, i: number): number => Math.imul(seed ^ Math.imul(i + 1, 2654435761), 2246822519) >>> 0;

/** The keys of a relation's records as JSON text: `"follower_username":` … */
const KEYS = { followers: PREFIXED.map((f) => `"${f}":`), following: FIELDS.map((f) => `"${f}":`) };

/** One member of a follower or following list, as the service shapes it. */
export function relationRecord(relation: 'followers' | 'following', people: number, i: number, username: string, checkedMs: number, micros: number): JsonText {
  const n = mix(people, i);
  const k = KEYS[relation];
  // One account in eight is an old one with a small id; the rest are past 2^53, as today's are.
  // Handles are ASCII syllables and digits (data.ts), so they go into the text unescaped.
  const id = n % 8 === 0 ? String(10_000 + i) : `1${String(n).padStart(10, '0')}${String(i % 1e8).padStart(8, '0')}`;
  return new JsonText(
    `{${k[0]}"${username}",${k[1]}${id},${profileText(k, n)},` +
      `${k[6]}${(n >>> 6) % 250_000},${k[7]}${(n >>> 10) % 5_000},${k[8]}${(n >>> 14) % 90_000},${k[9]}${lastTweetText(n)},` +
      `${k[10]}${CREATED[(n >>> 16) & 255]},${k[11]}"${isoMicros(checkedMs, micros)}"}`,
  );
}

/** The display name, bio, location and website of an account, from its mix `n`. */
const profileText = (k: readonly string[], n: number): string =>
  `${k[2]}${NAMES_JSON[n % NAMES.length]},${k[3]}${BIOS_JSON[(n >>> 4) % BIOS.length]},` +
  `${k[4]}${LOCATIONS_JSON[(n >>> 8) % LOCATIONS.length]},${k[5]}${WEBSITES_JSON[(n >>> 12) % WEBSITES.length]}`;

const lastTweetText = (n: number): string => (n % 5 === 0 ? 'null' : LAST_TWEET[(n >>> 7) & 255]!);

/**
 * A score of the score history. In the service's shape mostly a plain number, some a float Python writes with
 * `.0`, some a decimal longer than a double holds (`0.12345678901234567890123`).
 */
export function scoreRecord(date: string, seed: number, i: number, service: boolean): { date: string; score: number } | JsonText {
  const base = Math.round(((seed % 1000) / 10 + Math.sin(i / 9) * 5) * 100) / 100;
  if (!service) return { date, score: base };
  const score = i % 10 === 3 ? `${Math.floor(base)}.0` : i % 10 === 7 ? `${Math.floor(base)}.12345678901234567890123` : String(base);
  return new JsonText(`{"date":"${date}","score":${score}}`);
}

/** The counts of an account, as its metadata states them. */
export interface AccountCounts {
  followers: number;
  friends: number;
  tweets: number;
}

/** An account's metadata as the service's public clients read it: the follower fields without the prefix. */
export function accountRecord(username: string, id: string, seed: number, counts: AccountCounts, checked: string): JsonText {
  const n = mix(seed, 0);
  const k = KEYS.following;
  return new JsonText(
    `{${k[0]}${JSON.stringify(username)},${k[1]}${id},${profileText(k, n)},${k[6]}${counts.followers},${k[7]}${counts.friends},${k[8]}${counts.tweets},` +
      `${k[9]}${lastTweetText(n)},${k[10]}${CREATED[(n >>> 16) & 255]},${k[11]}"${checked}"}`,
  );
}
