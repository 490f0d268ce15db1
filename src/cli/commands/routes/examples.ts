import type { ROUTES, RouteSpec } from '../../../core/routes.js';

// The examples of each route's --help, written for that route: the fields they name are the
// ones its records have (record-fields.ts; the sandbox serves them), so each works as shown
// against `sgq --sandbox` or `sgq sandbox`. test/e2e/examples.test.ts runs every one of them.
// A comment `# exit N` gives the code an example exits with when it is not 0.

type RoutePath = (typeof ROUTES)[number]['path'];

const NOT_OPEN = '# exit 6 until the service opens the route';

export const ROUTE_EXAMPLES: Readonly<Record<RoutePath, readonly string[]>> = {
  'graph/get_followers': [
    'sgq graph followers jack',
    'sgq graph followers jack --all --out jack.ndjson',
    'sgq graph followers jack --all --limit 1000 | jq -r .follower_username',
    'sgq graph followers jack dorsey -o csv --fields query_user,follower_username,follower_num_followers',
    'sgq graph followers jack --since 24h',
    'sgq graph followers jack --since 2024-04-07T00:00:00Z --all',
    'sgq graph followers - --all --concurrency 8 < users.txt > followers.ndjson',
    'sgq graph followers jack --all --snapshot --changes',
    'sgq graph followers jack --all --dataset ~/sgq-data > /dev/null',
  ],
  'graph/get_following': [
    'sgq graph following jack',
    'sgq graph following jack --all | jq -r .username',
    'sgq graph following jack --all -o csv --fields username,num_followers,creation_date > following.csv',
    'sgq graph following jack --since 7d',
    'sgq graph following jack --all --snapshot',
    'cat users.txt | sgq graph following - --all --concurrency 8',
  ],
  'alpha/get_score_history': [
    'sgq alpha score-history jack',
    'sgq alpha score-history jack --all -o csv --fields date,score > scores.csv',
    "sgq alpha score-history jack --all --jq 'select(.score > 80) | .date'",
    'sgq alpha score-history jack dorsey --all -o json',
    'sgq alpha score-history jack --all --max-pages 3 --dry-run   # the price is assumed: it says so',
  ],
  'alpha/get_classification': [
    'sgq alpha classification jack',
    'sgq alpha classification jack dorsey -o csv --fields query_user,classification',
    "sgq alpha classification jack dorsey --jq '[.username, .classification] | @tsv'",
    'sgq alpha classification jack dorsey --dry-run   # the price is assumed: it says so',
  ],
  'metadata/get_metadata_history': [
    'sgq metadata history jack',
    'sgq metadata history jack --all -o csv --fields last_checked,followers_count,name',
    "sgq metadata history jack --all --limit 30 | jq -r '[.last_checked, .followers_count] | @tsv'",
    'sgq metadata history jack --all --out jack-history.ndjson',
  ],
  'metadata/get_tweets': [
    'sgq metadata tweets jack',
    'sgq metadata tweets jack --all --limit 1000 | jq -r .text',
    'sgq metadata tweets jack --all -o csv --fields created_at,like_count,text > jack-posts.csv',
    'sgq metadata tweets jack --page 2',
  ],
  'metadata/get_latest_tweets': [
    'sgq metadata latest-tweets jack',
    'sgq metadata latest-tweets jack dorsey -o csv --fields query_user,created_at,text',
    'sgq metadata latest-tweets - --max-credits 60 < users.txt   # 6 credits a user',
  ],
  'metadata/get_userid': [
    'sgq metadata userid jack',
    'sgq metadata userid jack dorsey -o csv --fields query_user,user_id',
    'sgq metadata userid - --jq .user_id < users.txt',
  ],
  'metadata/get_follower_count': [
    'sgq metadata follower-count jack',
    'sgq metadata follower-count jack dorsey -o csv --fields query_user,num_followers',
    'sgq metadata follower-count 1234567890123456789 --how userid --jq .num_followers',
  ],
  'metadata/get_past_usernames': [
    'sgq metadata past-usernames jack',
    'sgq metadata past-usernames jack | jq -r .username',
    'sgq metadata past-usernames jack dorsey -o csv --fields query_user,username,last_checked',
  ],
  'metadata/get_latest_metadata': [
    'sgq metadata latest jack',
    'sgq metadata latest jack dorsey -o csv --fields username,num_followers,num_friends,num_tweets',
    "sgq metadata latest 1234567890123456789 --how userid --jq '[.username, .creation_date] | @tsv'",
    'sgq metadata latest - --max-credits 100 < users.txt > accounts.ndjson',
  ],
  'metadata/get_current_metadata': [
    'sgq metadata current jack',
    'sgq metadata current jack dorsey --dry-run   # 6 credits a call',
    'sgq metadata current jack dorsey -o json --fields username,num_followers,last_tweet',
  ],
  'metadata/get_current_num_followers': [
    'sgq metadata current-followers jack',
    'sgq metadata current-followers jack dorsey -o csv --fields query_user,num_followers,last_checked',
  ],
  'metadata/get_current_num_following': [
    'sgq metadata current-following jack',
    'sgq metadata current-following jack dorsey -o csv --fields query_user,num_friends,last_checked',
  ],
  'metadata/get_current_num_tweets': [
    'sgq metadata current-tweets jack',
    'sgq metadata current-tweets jack dorsey --jq .num_tweets',
  ],
  'lists/get_list_members': [`sgq lists members 1234567890   ${NOT_OPEN}`, 'sgq lists members 1234567890 --dry-run'],
  'lists/get_latest_list_tweets': [`sgq lists latest-tweets 1234567890   ${NOT_OPEN}`, 'sgq lists latest-tweets 1234567890 --dry-run'],
  info: ['sgq info', 'sgq info -o json'],
};

/** A route's examples: every route of the table has some (the type of ROUTE_EXAMPLES says so). */
export const examplesOf = (route: RouteSpec): readonly string[] => ROUTE_EXAMPLES[route.path as RoutePath];
