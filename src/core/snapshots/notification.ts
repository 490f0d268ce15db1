import type { JsonObject } from '../classify.js';
import { stringifyJson } from '../json.js';

// What a --snapshot run with --notify posts: one JSON body per run that found changes. `text`
// is one line naming the users (what Slack shows), `content` the same line within Discord's
// 2,000 characters, and `changes` the changes themselves, user by user, as --changes prints
// their records; the accounts listed are bounded, and the body says how many were left out.

/** Discord refuses a `content` longer than this. */
export const DISCORD_CONTENT_CHARS = 2000;
/** `text` stays one readable line: Slack truncates a message's text past 40,000 characters, and shows far less. */
export const TEXT_CHARS = 4000;
/** Accounts listed in one notification, over all its users; the rest are counted. */
export const NOTIFY_MAX_ACCOUNTS = 500;
/** The text of the accounts listed in one notification, at most: a body stays well under any receiver's limit. */
export const NOTIFY_MAX_ACCOUNT_BYTES = 256 * 1024;
/** Users whose changes one notification carries; the others are named in `text` as room allows, and counted. */
export const NOTIFY_MAX_USERS = 500;

/** The changes of one user's snapshot, as a notification carries them. */
export interface UserChanges {
  user: string;
  /** The route below /api/ (graph/get_followers). */
  route: string;
  how: string;
  /** When this snapshot was taken, and the one it was compared with. */
  taken_at: string;
  previous_taken_at: string;
  counts: { gained: number; lost: number; renamed: number };
  /** The accounts, as --changes prints them without `change` (a rename with `renamed_from`, a confirmed loss with `last_seen`). */
  gained: JsonObject[];
  lost: JsonObject[];
  renamed: JsonObject[];
  /** Accounts of this user not listed (the bound of the notification). */
  left_out: number;
}

export interface Notification {
  text: string;
  content: string;
  /** What ran: `sgq graph followers`. */
  command: string;
  changes: UserChanges[];
  /** Accounts that changed but are not listed in `changes` (the bounds of a notification). */
  left_out: number;
  /** Users with changes not in `changes`, past NOTIFY_MAX_USERS. */
  left_out_users: number;
}

/**
 * The room left for the accounts of one notification: taken account by account, by the users'
 * changes as they are found, so a run of thousands of users holds a bounded list.
 */
export class AccountRoom {
  private accounts = NOTIFY_MAX_ACCOUNTS;
  private bytes = NOTIFY_MAX_ACCOUNT_BYTES;

  /** Takes room for one account's record; false when there is none left. */
  take(record: JsonObject): boolean {
    if (this.accounts <= 0) return false;
    const size = stringifyJson(record).length;
    if (size > this.bytes) return false;
    this.accounts--;
    this.bytes -= size;
    return true;
  }
}

/** A user's changes listed as room allows: `record` is the account as --changes prints it. */
export function listChange(into: UserChanges, change: 'gained' | 'lost' | 'renamed', record: JsonObject, room: AccountRoom): void {
  into.counts[change]++;
  // Each list carries the field of its own kind only: a rename's older name, a loss's last sighting.
  const { change: _change, renamed_from: from, last_seen: seen, ...rest } = record;
  const account = { ...(change === 'renamed' ? { renamed_from: from! } : {}), ...(change === 'lost' && seen ? { last_seen: seen } : {}), ...rest };
  if (room.take(account)) into[change].push(account);
  else into.left_out++;
}

/** The body of a run's notification, from the changes of the users whose snapshots were kept. */
export function notificationBody(command: string, changes: readonly UserChanges[]): Notification {
  // In the users' order (then the route's), not the order their jobs happened to end in.
  const found = changes.filter((c) => c.counts.gained + c.counts.lost + c.counts.renamed > 0).sort((a, b) => compare(a.user, b.user) || compare(a.route, b.route));
  const listed = found.slice(0, NOTIFY_MAX_USERS);
  const unlisted = found.slice(NOTIFY_MAX_USERS).reduce((n, c) => n + c.counts.gained + c.counts.lost + c.counts.renamed, 0);
  return {
    text: summaryLine(command, found, TEXT_CHARS),
    content: summaryLine(command, found, DISCORD_CONTENT_CHARS),
    command,
    changes: listed,
    left_out: listed.reduce((n, c) => n + c.left_out, 0) + unlisted,
    left_out_users: found.length - listed.length,
  };
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** `jack 12 gained, 3 lost` (renamed when there were renames). */
function userPart(c: UserChanges): string {
  const parts = [`${c.counts.gained} gained`, `${c.counts.lost} lost`];
  if (c.counts.renamed) parts.push(`${c.counts.renamed} renamed`);
  return `${oneLine(c.user)} ${parts.join(', ')}`;
}

/**
 * One line naming each user with its counts, within `max` characters: the users that do not
 * fit are counted at the end (`and 37 more users`).
 */
export function summaryLine(command: string, changes: readonly UserChanges[], max: number): string {
  const head = `${command}: `;
  const parts = changes.map(userPart);
  let line = head + parts.join('; ');
  if (line.length <= max) return line;
  for (let shown = parts.length - 1; shown >= 0; shown--) {
    const more = parts.length - shown;
    line = `${head}${parts.slice(0, shown).join('; ')}${shown ? '; ' : ''}and ${more} more user${more === 1 ? '' : 's'} with changes`;
    if (line.length <= max) return line;
  }
  return line.slice(0, max);
}

/** A user name as it reads in one line: no line breaks or other controls. */
const oneLine = (text: string): string => text.replace(/[\p{Cc}\u2028\u2029]+/gu, ' ');
