// Text as real profiles hold it, and strings that look like something else to a reader: for
// the tests of the table and of YAML against the readers people use.

/** Strings that YAML 1.1 (PyYAML) or 1.2 would read as a bool, null, number, date or syntax. */
export const LOOKALIKES = [
  'yes', 'Yes', 'YES', 'no', 'No', 'on', 'ON', 'off', 'Off', 'y', 'Y', 'n', 'N', 'yEs', 'true', 'False', 'TRUE',
  '~', 'null', 'Null', 'NULL', '', '=', '<<',
  '007', '0o17', '0x1F', '0b101', '1_000', '+12', '-3', '1.5', '.5', '1e5', '1E+5', '6.8523015e+5', '1:20', '190:20:30', '-1:20.5',
  '.inf', '-.Inf', '+.INF', '.nan', '.NaN', '._', '0.',
  '2024-01-01', '2024-1-1', '2001-12-14t21:59:43.10-05:00', '2001-12-14 21:59:43.10 -5', '2002-12-14',
  '- x', '-', '? x', '?', ': x', 'a: b', 'a:', 'x #y', '#tag', '@me', '`x`', '!tag', '&a', '*a', '|', '>', "'q'", '"q"', '%YAML',
  '---', '...', '--- x', '... x', '[a]', '{a: 1}', 'a, b', ' leading', 'trailing ', '\u00a0nbsp', 'ideographic\u3000',
];

/** What real bios and names hold: every script, emoji of every kind, marks, and characters a reader must escape. */
export const MULTILINGUAL = [
  '山田太郎', '김민준', 'Zoë Ångström', 'e\u0301cole', 'नमस्ते दुनिया', 'مرحبا بالعالم', 'שלום', 'Привет', 'ไทย',
  '👨‍👩‍👧‍👦 family', '🇯🇵🇫🇷🇧🇷', '👍🏽 ok', '❤️', 'ｶﾞｷﾞ', 'ＦＵＬＬ', 'a\u200bb\u200dc', '¯\\_(ツ)_/¯',
  'tab\there', 'two\nlines', 'crlf\r\nend', 'bell\u0007esc\u001b[31mred', 'c1\u0085nel\u009bcsi', 'ls\u2028ps\u2029', '\ufeffbom', 'del\u007f',
  '\u202eoverride', 'lone \ud800 surrogate', 'nul\u0000byte', 'back\\slash "quote"', 'trailing\n', '\n\nleading',
];

/** JSON number tokens a reader could take differently: each must come back as its JSON reader reads it. */
export const NUMBER_TOKENS = ['0', '-0', '1.0', '-0.0', '0.12345678901234567890123', '1E400', '-1e-400', '1e5', '2.5E-3', '123456789012345678901234567890', '18446744073709551617', '9007199254740993'];

/**
 * `n` follower records in the service's prefixed shape, as the JSON text of a page's `data`
 * (so that every number token reaches sgq as written), cycling through the strings above.
 */
export function followerRecordsJson(n: number): string {
  const texts = [...MULTILINGUAL, ...LOOKALIKES];
  const records: string[] = [];
  for (let i = 0; i < n; i++) {
    const pick = (k: number) => JSON.stringify(texts[(i * 7 + k) % texts.length]);
    const fields = [
      `"follower_username":${pick(0)}`,
      `"follower_userid":${10n ** 19n + BigInt(i)}`,
      `"follower_list_name":${i % 5 === 0 ? 'null' : pick(1)}`,
      `"follower_bio":${pick(2)}`,
      `"follower_location":${i % 3 === 0 ? '"null"' : pick(3)}`,
      `"follower_website":${i % 4 === 0 ? 'null' : pick(4)}`,
      `"follower_num_followers":${NUMBER_TOKENS[i % NUMBER_TOKENS.length]}`,
      `"follower_num_friends":${i}`,
      `"follower_last_tweet":${pick(5)}`,
      `"follower_creation_date":"2009-0${(i % 9) + 1}-14"`,
      `"follower_last_checked":"2024-04-07T10:00:00.000001+00:00"`,
      `${pick(6)}:${pick(8)}`,
    ];
    records.push(`{${fields.join(',')}}`);
  }
  return `[${records.join(',')}]`;
}

/** A page of the service (spec §2.1) around `data`, given as JSON text. */
export function pageJson(dataJson: string, count: number, user = 'jack'): string {
  return `{"user":${JSON.stringify(user)},"how":"username","page":1,"previous_page":null,"next_page":null,"page_items":${count},"data":${dataJson},"current_credits":1000}`;
}
