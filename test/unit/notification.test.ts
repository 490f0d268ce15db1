// The body of a --notify notification (src/core/snapshots/notification.ts): one summary line
// within its bound, the accounts listed within the room of a notification.
import { describe, expect, it } from 'vitest';
import { AccountRoom, DISCORD_CONTENT_CHARS, NOTIFY_MAX_ACCOUNTS, NOTIFY_MAX_USERS, listChange, notificationBody, summaryLine, type UserChanges } from '../../src/core/snapshots/notification.js';

const changes = (user: string, gained: number, lost = 0): UserChanges => ({
  user,
  route: 'graph/get_followers',
  how: 'username',
  taken_at: '2026-11-02T03:15:00.000Z',
  previous_taken_at: '2026-11-01T03:15:00.000Z',
  counts: { gained, lost, renamed: 0 },
  gained: [],
  lost: [],
  renamed: [],
  left_out: 0,
});

describe('the summary line', () => {
  it('names each user with its counts, one line, in the order of their names (not of their jobs\' ends), users with no change left out', () => {
    const body = notificationBody('sgq graph followers', [changes('jack', 2, 1), changes('quiet', 0), changes('evil\nname\u0007', 1)]);
    expect(body.text).toBe('sgq graph followers: evil name  1 gained, 0 lost; jack 2 gained, 1 lost');
    expect(body.changes.map((c) => c.user)).toEqual(['evil\nname\u0007', 'jack']);
  });

  it('counts the users that do not fit: within Discord\'s 2,000 characters whatever their number', () => {
    const many = Array.from({ length: 400 }, (_, i) => changes(`user_number_${i}`, i + 1));
    const line = summaryLine('sgq graph followers', many, DISCORD_CONTENT_CHARS);
    expect(line.length).toBeLessThanOrEqual(DISCORD_CONTENT_CHARS);
    const shown = line.split('; ').length - 1;
    expect(line.endsWith(`; and ${400 - shown} more users with changes`)).toBe(true);
    expect(line.startsWith('sgq graph followers: user_number_0 1 gained, 0 lost; user_number_1 2 gained')).toBe(true);
  });
});

describe('the users of a notification', () => {
  it('carries the changes of 500 users at most, counting the others and their accounts as left out', () => {
    const many = Array.from({ length: NOTIFY_MAX_USERS + 3 }, (_, i) => changes(`u${i}`, 2, 1));
    const body = notificationBody('sgq graph followers', many);
    expect(body.changes).toHaveLength(NOTIFY_MAX_USERS);
    expect([body.left_out_users, body.left_out]).toEqual([3, 9]);
  });
});

describe('the room for accounts', () => {
  it('lists accounts until the room is used up, counting the rest; each list keeps the field of its kind only', () => {
    const room = new AccountRoom();
    const into = changes('jack', 0);
    into.counts.gained = 0;
    for (let i = 0; i < NOTIFY_MAX_ACCOUNTS + 3; i++) listChange(into, 'gained', { change: 'gained', renamed_from: null, last_seen: null, username: `a${i}` }, room);
    listChange(into, 'lost', { change: 'lost', renamed_from: null, last_seen: '2026-11-01T03:15:00.000Z', username: 'gone' }, room);
    expect(into.gained).toHaveLength(NOTIFY_MAX_ACCOUNTS);
    expect(into.gained[0]).toEqual({ username: 'a0' });
    expect(into.counts).toEqual({ gained: NOTIFY_MAX_ACCOUNTS + 3, lost: 1, renamed: 0 });
    expect(into.left_out).toBe(4);
    const other = changes('jill', 0);
    listChange(other, 'lost', { change: 'lost', last_seen: '2026-11-01T03:15:00.000Z', username: 'gone' }, new AccountRoom());
    listChange(other, 'renamed', { change: 'renamed', renamed_from: 'old', last_seen: null, username: 'new' }, new AccountRoom());
    expect(other.lost).toEqual([{ last_seen: '2026-11-01T03:15:00.000Z', username: 'gone' }]);
    expect(other.renamed).toEqual([{ renamed_from: 'old', username: 'new' }]);
  });

  it('a record too large for the room left is counted, not listed', () => {
    const room = new AccountRoom();
    const into = changes('jack', 0);
    listChange(into, 'gained', { change: 'gained', username: 'big', bio: 'x'.repeat(300 * 1024) }, room);
    listChange(into, 'gained', { change: 'gained', username: 'small' }, room);
    expect(into.gained.map((a) => a.username)).toEqual(['small']);
    expect(into.left_out).toBe(1);
  });
});
