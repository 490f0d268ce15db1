// The records of the routes about one account (its metadata, counts, past usernames and
// classification), one call each. The account is the user asked for, by username or by
// numeric id (how=userid, as the public clients send), and its figures agree with the other
// routes: num_followers is the length of its follower list, num_tweets that of its posts.
import type { RouteSpec } from '../core/routes.js';
import { handle, hash, isoMicros, userId } from './data.js';
import { listSize } from './churn.js';
import { accountRecord, JsonText } from './records.js';

/** Who a request names: its handle and its id (digits, past 2^53 for most). */
interface Account {
  username: string;
  id: string;
  seed: number;
}

const DAY_MS = 86_400_000;

/** Made up: no public page names the classes the service gives. */
const CLASSES = ['individual', 'project', 'fund', 'media', 'bot'];

function accountOf(user: string, how: string): Account {
  if (how === 'username') return { username: user, id: userId(user), seed: hash(user.toLowerCase()) };
  // An id has no name to derive from: a handle from its digits. Leading zeros are not JSON.
  const id = BigInt(user).toString();
  return { username: handle(hash(`name:${id}`), 0).replace(/_0$/, ''), id, seed: hash(user.toLowerCase()) };
}

/** The counts the other routes agree with (at `now`, when the lists churn). */
function countsOf(user: string, seed: number, now: number, churn: number) {
  return { followers: listSize(user, 'followers', now, churn), friends: listSize(user, 'following', now, churn), tweets: 1 + (seed % 450) };
}

const ACCOUNT_ROUTES = new Set([
  'metadata/get_latest_metadata',
  'metadata/get_current_metadata',
  'metadata/get_follower_count',
  'metadata/get_current_num_followers',
  'metadata/get_current_num_following',
  'metadata/get_current_num_tweets',
  'metadata/get_past_usernames',
  'alpha/get_classification',
]);

/** The records of a route about one account; undefined for a route that is not one of them. */
export function accountItems(route: RouteSpec, user: string, how: string, now: number, churn = 0): JsonText[] | undefined {
  if (!ACCOUNT_ROUTES.has(route.path)) return undefined;
  const account = accountOf(user, how);
  const counts = countsOf(user, account.seed, now, churn);
  // What the service stored was seen within the last day; the current routes look now.
  const stored = now - (account.seed % DAY_MS);
  const micros = account.seed % 1_000_000;
  const head = `"username":${JSON.stringify(account.username)},"userid":${account.id}`;
  const count = (field: string, value: number, at: number) => new JsonText(`{${head},"${field}":${value},"last_checked":"${isoMicros(at, micros)}"}`);
  switch (route.path) {
    case 'metadata/get_latest_metadata':
      return [accountRecord(account.username, account.id, account.seed, counts, isoMicros(stored, micros))];
    case 'metadata/get_current_metadata':
      return [accountRecord(account.username, account.id, account.seed, counts, isoMicros(now, micros))];
    case 'metadata/get_follower_count':
      return [count('num_followers', counts.followers, stored)];
    case 'metadata/get_current_num_followers':
      return [count('num_followers', counts.followers, now)];
    case 'metadata/get_current_num_following':
      return [count('num_friends', counts.friends, now)];
    case 'metadata/get_current_num_tweets':
      return [count('num_tweets', counts.tweets, now)];
    case 'metadata/get_past_usernames':
      return pastUsernames(account, now);
    case 'alpha/get_classification':
      return [new JsonText(`{${head},"classification":"${CLASSES[account.seed % CLASSES.length]}","last_checked":"${isoMicros(stored, micros)}"}`)];
    default:
      return undefined;
  }
}

/** One to three handles the account had, the latest first, each last seen a month before the next. */
function pastUsernames(account: Account, now: number): JsonText[] {
  return Array.from({ length: 1 + (account.seed % 3) }, (_, i) => {
    const checked = isoMicros(now - (i + 1) * 30 * DAY_MS, (account.seed + i) % 1_000_000);
    return new JsonText(`{"username":"${handle(account.seed, i)}","last_checked":"${checked}"}`);
  });
}
