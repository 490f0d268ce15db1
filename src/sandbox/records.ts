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
 * A number token the sandbox writes as it is (a bare integer past 2^53, a long decimal):
 * JSON.stringify cannot, so it writes a marker that `bodyText` turns into the token.
 */
export class RawToken {
  constructor(readonly text: string) {}
  toJSON(): string {
    return `${MARK}${this.text}${MARK}`;
  }
}

// A private-use character: JSON.stringify leaves it as it is, and no generated text holds it.
const MARK = '\uE000';
const MARKED = /"\uE000([^"\uE000]*)\uE000"/g;

/** The JSON text of an answer, with its raw tokens written bare. */
export function bodyText(body: unknown, raw: boolean): string {
  const text = JSON.stringify(body);
  return raw ? text.replace(MARKED, '$1') : text;
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

/** One member of a follower or following list, as the service shapes it. */
export function relationRecord(relation: 'followers' | 'following', people: number, i: number, username: string, checkedMs: number, micros: number) {
  const n = mix(people, i);
  const names = relation === 'followers' ? PREFIXED : FIELDS;
  // One account in eight is an old one with a small id; the rest are past 2^53, as today's are.
  const id = n % 8 === 0 ? new RawToken(String(10_000 + i)) : new RawToken(`1${String(n).padStart(10, '0')}${String(i % 1e8).padStart(8, '0')}`);
  const created = Date.UTC(2007 + (n % 17), (n >>> 5) % 12, 1 + ((n >>> 9) % 28), (n >>> 3) % 24);
  const values = [
    username,
    id,
    NAMES[n % NAMES.length]!,
    BIOS[(n >>> 4) % BIOS.length]!,
    LOCATIONS[(n >>> 8) % LOCATIONS.length]!,
    WEBSITES[(n >>> 12) % WEBSITES.length]!,
    (n >>> 6) % 250_000,
    (n >>> 10) % 5_000,
    (n >>> 14) % 90_000,
    n % 5 === 0 ? null : isoMicros(checkedMs - ((n >>> 7) % 1_000) * 3_600_000, 0),
    isoMicros(created, 0),
    isoMicros(checkedMs, micros),
  ];
  const record: Record<string, unknown> = {};
  for (let k = 0; k < names.length; k++) record[names[k]!] = values[k];
  return record;
}

/**
 * A score of the score history. In the service's shape mostly a plain number, some a float Python writes with
 * `.0`, some a decimal longer than a double holds (`0.12345678901234567890123`).
 */
export function score(seed: number, i: number, service: boolean): number | RawToken {
  const base = Math.round(((seed % 1000) / 10 + Math.sin(i / 9) * 5) * 100) / 100;
  if (!service) return base;
  if (i % 10 === 3) return new RawToken(`${Math.floor(base)}.0`);
  if (i % 10 === 7) return new RawToken(`${Math.floor(base)}.12345678901234567890123`);
  return base;
}
