import { describe, expect, it } from 'vitest';
import { tableColumns } from '../../src/cli/formats/table-columns.js';
import { relationFields } from '../../src/sandbox/records.js';

// Which columns a table shows, from the keys of its records: each route's default columns
// (src/core/record-fields.ts), `--fields`, or every field with `--wide`.
const shown = (keys: readonly string[], options: { fields?: string[]; wide?: boolean } = {}) => tableColumns(keys, options).map((c) => [c.header, c.field]);

describe('the table\'s columns', () => {
  it('followers: the handle, the name, followers, following, posts and created, under short headers', () => {
    expect(shown(relationFields('followers'))).toEqual([
      ['username', 'follower_username'],
      ['name', 'follower_list_name'],
      ['followers', 'follower_num_followers'],
      ['following', 'follower_num_friends'],
      ['posts', 'follower_num_tweets'],
      ['created', 'follower_creation_date'],
    ]);
  });

  it('following (and the same fields anywhere): the same columns without the prefix', () => {
    expect(shown(relationFields('following'))).toEqual([
      ['username', 'username'],
      ['name', 'list_name'],
      ['followers', 'num_followers'],
      ['following', 'num_friends'],
      ['posts', 'num_tweets'],
      ['created', 'creation_date'],
    ]);
  });

  it('metadata history: when, then the account', () => {
    expect(shown(['username', 'name', 'description', 'followers_count', 'last_checked'])).toEqual([
      ['checked', 'last_checked'],
      ['username', 'username'],
      ['name', 'name'],
      ['followers', 'followers_count'],
    ]);
  });

  it('posts, scores and user ids', () => {
    expect(shown(['id', 'text', 'created_at', 'like_count']).map(([h]) => h)).toEqual(['created', 'likes', 'text', 'id']);
    expect(shown(['date', 'score']).map(([h]) => h)).toEqual(['date', 'score']);
    expect(shown(['username', 'user_id'])).toEqual([['username', 'username'], ['userid', 'user_id']]);
  });

  it('sgq\'s own tags come first: the user asked (several users) and the change (--changes, diff)', () => {
    expect(shown(['query_user', ...relationFields('followers')]).slice(0, 2)).toEqual([['query_user', 'query_user'], ['username', 'follower_username']]);
    expect(shown(['change', 'renamed_from', ...relationFields('following')]).slice(0, 3).map(([h]) => h)).toEqual(['change', 'renamed_from', 'username']);
  });

  it('records of another shape (the spec\'s example, unknown fields) show every field, as they come', () => {
    expect(shown(['username', 'last_checked'])).toEqual([['username', 'username'], ['last_checked', 'last_checked']]);
    expect(shown(['a', 'b', 'username'])).toEqual([['a', 'a'], ['b', 'b'], ['username', 'username']]);
    // A name or two in common with a kind of record is not that kind: nothing is hidden.
    expect(shown(['id', 'text', 'author', 'lang']).map(([h]) => h)).toEqual(['id', 'text', 'author', 'lang']);
    // A field the service adds one day does not bring back every column.
    expect(shown([...relationFields('followers'), 'follower_verified'])).toHaveLength(6);
  });

  it('--wide: every field under its own name; --fields: the fields named, in that order', () => {
    expect(shown(relationFields('followers'), { wide: true })).toEqual(relationFields('followers').map((f) => [f, f]));
    expect(shown(relationFields('followers'), { fields: ['follower_userid', 'follower_username'] })).toEqual([['follower_userid', 'follower_userid'], ['follower_username', 'follower_username']]);
  });

  it('numbers, ids, handles and dates are whole; timestamps are shown as dates; counts are aligned right', () => {
    const columns = tableColumns(relationFields('followers'), { wide: true });
    const of = (field: string) => columns.find((c) => c.field === field)!;
    for (const field of ['follower_username', 'follower_userid', 'follower_num_followers', 'follower_creation_date', 'follower_last_checked']) expect(of(field).whole, field).toBe(true);
    for (const field of ['follower_list_name', 'follower_bio', 'follower_location', 'follower_website']) expect(of(field).whole, field).toBe(false);
    for (const field of ['follower_creation_date', 'follower_last_tweet', 'follower_last_checked']) expect(of(field).date, field).toBe(true);
    expect(of('follower_num_tweets').right).toBe(true);
    expect(of('follower_username').right).toBe(false);
  });
});
