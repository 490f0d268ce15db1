import { inCliWords } from '../../src/cli/program/errors-to-flags.js';
import { describe, expect, it } from 'vitest';
import { ExitCode, SgqError } from '../../src/core/errors.js';
import { chooseMatch, fieldsOf, noIdentity } from '../../src/core/records/identity.js';
import { keyReader } from '../../src/core/records/record-key.js';
import { diffSorted, type Change } from '../../src/core/diff/merge-diff.js';
import { glimpse } from '../../src/core/records/sources.js';
import type { Keyed } from '../../src/core/records/keyed.js';
import { parseJson, stringifyJson, type Json } from '../../src/core/json.js';

/** What parsing the line gives for `key`, as keyReader promises it: a string as is, anything else as JSON text. */
function parsed(line: string, key: string): string | undefined {
  const value = (parseJson(line) as Record<string, Json>)[key];
  if (value === undefined || value === null) return undefined;
  return typeof value === 'string' ? value : stringifyJson(value);
}

describe('keyReader on the service\'s records', () => {
  const big = '18446744073709551617'; // 2^64 + 1: a JS number would make it 18446744073709552000
  const follower = `{"follower_username":"jack","follower_userid":${big},"follower_bio":"a\\tb","follower_num_followers":12}`;

  it('reads a prefixed id anywhere in the record as its exact digits, never a JS number', () => {
    expect(keyReader('follower_userid')(follower)).toBe(big);
    expect(keyReader('follower_username')(follower)).toBe('jack');
    expect(keyReader('follower_num_followers')(follower)).toBe('12');
    // Two ids a double cannot tell apart stay two keys.
    const read = keyReader('userid');
    expect(read('{"username":"a","userid":9007199254740993}')).not.toBe(read('{"username":"b","userid":9007199254740992}'));
  });

  it('gives what parsing gives, however the line is written', () => {
    const lines = [
      follower,
      // A bio that holds the text of a key: escaped quotes never match.
      '{"follower_bio":"x\\",\\"follower_userid\\":5,","follower_userid":7}',
      '{"follower_bio":"{\\"follower_userid\\":5}","follower_userid":8}',
      // A key that ends in the name is another key.
      '{"a\\"follower_userid":1}',
      '{"follower_userid":4,"a\\"follower_userid":1}',
      // Nested objects, spaces, other number forms and escapes go to the parser.
      '{"meta":{"follower_userid":1},"follower_userid":2}',
      '{"follower_userid" : 3}',
      '{"follower_userid":1.0}',
      '{"follower_userid":-0}',
      '{"follower_userid":1e3}',
      '{"follower_userid":"12"}',
      '{"follower_userid":"a\\"b"}',
      '{"follower_userid":null,"follower_username":"x"}',
      '{"follower_username":"x"}',
      '{"follower_userid":1,"follower_userid":2}',
      '{"follower_userid":true}',
      '{"username":"\\u006a"}',
      '{"x":"\\\\","follower_userid":9}',
      `{"follower_userid":${big}}`,
    ];
    for (const line of lines) {
      for (const key of ['follower_userid', 'username', 'follower_username']) expect(keyReader(key)(line), `${key} of ${line}`).toBe(parsed(line, key));
    }
  });

  it('agrees with the parser on random flat records', () => {
    const pieces = ['"', '\\"', ',', ':', '{', '}', 'id', 'follower_userid', ' ', '\\\\', 'a'];
    let seed = 7;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % n);
    for (let i = 0; i < 2000; i++) {
      const bio = Array.from({ length: rand(8) }, () => pieces[rand(pieces.length)]).join('');
      const record: Record<string, unknown> = { follower_bio: bio.replace(/\\(?!["\\])/g, '') };
      if (rand(3)) record.follower_userid = rand(2) ? rand(1e9) : `s${rand(9)}`;
      let line: string;
      try {
        line = JSON.stringify(rand(2) ? record : { ...record, follower_bio2: bio });
      } catch {
        continue;
      }
      expect(keyReader('follower_userid')(line), line).toBe(parsed(line, 'follower_userid'));
    }
  });
});

describe('choosing an identity', () => {
  const side = (fields: ReturnType<typeof fieldsOf>, where = 'side', records = true) => ({ records, fields, sample: ['a'], where });

  it('finds the id and the username of each record shape', () => {
    expect(fieldsOf({ follower_username: 'a', follower_userid: 1, follower_bio: null })).toEqual({ id: 'follower_userid', name: 'follower_username' });
    expect(fieldsOf({ username: 'a', userid: 1 })).toEqual({ id: 'userid', name: 'username' });
    expect(fieldsOf({ username: 'a', last_checked: 'x' })).toEqual({ id: undefined, name: 'username' });
    expect(fieldsOf({ user_id: 5 })).toEqual({ id: 'user_id', name: undefined });
    expect(fieldsOf({ follower_userid: null, username: 'a' })).toEqual({ id: undefined, name: 'username' });
    expect(fieldsOf({ bio: 'x' })).toBeUndefined();
    expect(fieldsOf({ n: 1, username: 'a' }, 'n')).toEqual({ key: 'n' });
    expect(fieldsOf({ username: 'a' }, 'n')).toBeUndefined();
  });

  it('matches by id when both sides have one, with the usernames for renames', () => {
    const m = chooseMatch(side({ id: 'userid', name: 'username' }), side({ id: 'follower_userid', name: 'follower_username' }));
    expect(m).toEqual({ by: 'id', older: 'userid', newer: 'follower_userid', names: { older: 'username', newer: 'follower_username' } });
  });

  it('falls back to the username when one side has no ids, and says why', () => {
    const m = chooseMatch(side({ name: 'username' }, 'OLD'), side({ id: 'follower_userid', name: 'follower_username' }, 'NEW'));
    expect(m).toMatchObject({ by: 'name', older: 'username', newer: 'follower_username' });
    expect(m.note).toMatch(/OLD has no account ids/);
    expect(chooseMatch(side({ name: 'username' }), side({ name: 'username' })).note).toBeUndefined();
  });

  it('a side without records matches anything; --key is used as given', () => {
    expect(chooseMatch(side(undefined, 'OLD', false), side({ id: 'userid', name: 'username' }))).toMatchObject({ by: 'id', older: 'userid', newer: 'userid' });
    expect(chooseMatch(side(undefined, 'OLD', false), side(undefined, 'NEW', false))).toMatchObject({ by: 'name', older: 'username' });
    expect(chooseMatch(side({ key: 'n' }), side({ key: 'n' }), 'n')).toEqual({ by: 'key', older: 'n', newer: 'n' });
  });

  it('records without any identity are exit 3, an unknown --key exit 2, one line naming --key', () => {
    const none = () => chooseMatch(side(undefined, 'OLD'), side({ name: 'username' }));
    expect(none).toThrow(SgqError);
    try {
      none();
    } catch (error) {
      expect((error as SgqError).exitCode).toBe(ExitCode.config);
      expect((error as SgqError).message).toMatch(/^OLD: no record has an id or username field/);
      // The core names the option; the CLI's words name the flag (src/cli/program/errors-to-flags.ts).
      expect((error as SgqError).details).toMatchObject({ option: 'key', fix: 'name-key-field' });
      expect(inCliWords(error as SgqError).hint).toMatch(/--key FIELD/);
    }
    const unknown = noIdentity('NEW', 'uid', ['follower_username', 'follower_userid']);
    expect(unknown.exitCode).toBe(ExitCode.usage);
    expect(unknown.message).toBe('NEW: no record has the field "uid" that key names (its first record has follower_username, follower_userid)');
    expect(inCliWords(unknown).message).toBe('NEW: no record has the field "uid" that --key names (its first record has follower_username, follower_userid)');
    const apart = () => chooseMatch(side({ id: 'user_id' }, 'OLD'), side({ name: 'username' }, 'NEW'));
    expect(apart).toThrow(/share no identity field/);
  });
});

describe('renames', () => {
  const keyed = (lines: string[], key: string): AsyncIterable<Keyed[]> =>
    (async function* () {
      yield lines.map((line) => ({ key: keyReader(key)(line)!, line })).sort((a, b) => (a.key < b.key ? -1 : 1));
    })();

  it('a same id under another username is renamed, counted apart, with the old name', async () => {
    const older = ['{"username":"amy","userid":1}', '{"username":"bob","userid":2}', '{"username":"cat","userid":3,"n":1}'];
    const newer = ['{"username":"amelia","userid":1}', '{"username":"cat","userid":3,"n":2}', '{"username":"dan","userid":4}'];
    const out: Change[] = [];
    const names = { older: keyReader('username'), newer: keyReader('username') };
    const counts = await diffSorted(keyed(older, 'userid'), keyed(newer, 'userid'), { changed: true, names }, async (b) => void out.push(...b));
    expect(counts).toEqual({ gained: 1, lost: 1, renamed: 1, changed: 1, unchanged: 0 });
    expect(out).toEqual([
      { change: 'renamed', line: newer[0], from: 'amy' },
      { change: 'lost', line: older[1] },
      { change: 'changed', line: newer[1] },
      { change: 'gained', line: newer[2] },
    ]);
    // Without names (matched by username) there are no renames: amy and amelia are two accounts.
    const byName = await diffSorted(keyed(older, 'username'), keyed(newer, 'username'), { changed: false }, async () => undefined);
    expect(byName).toEqual({ gained: 2, lost: 2, renamed: 0, changed: 0, unchanged: 1 });
  });
});

describe('glimpse', () => {
  it('stops at the first record that shows an identity, and tells an empty side from one without identity', async () => {
    let read = 0;
    const batches = async function* (lines: string[]) {
      for (const line of lines) {
        read++;
        yield [line];
      }
    };
    expect(await glimpse(batches(['{"bio":"x"}', '{"username":"a","userid":2}', '{"username":"b"}']))).toEqual({
      records: true,
      fields: { id: 'userid', name: 'username' },
      sample: ['bio'],
    });
    expect(read).toBe(2);
    expect(await glimpse(batches([]))).toEqual({ records: false, sample: undefined });
    expect(await glimpse(batches(['{"bio":"x"}']))).toEqual({ records: true, sample: ['bio'] });
    expect(await glimpse(batches(['{"bio":"x"}']), 'bio')).toMatchObject({ fields: { key: 'bio' } });
  });
});
