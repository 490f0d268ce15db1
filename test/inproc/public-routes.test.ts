import { describe, expect, it } from 'vitest';
import { RECORD_FIELDS } from '../../src/core/record-fields.js';
import { ROUTES, commandName } from '../../src/core/routes.js';
import { lines, ndjson, runSgq } from '../helpers/run.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useStubs } from '../helpers/stub-server.js';

// The routes of the service's public credit table that came after the spec: each a command of
// the route table, with its published price (or one sgq assumes, and says so), the body the
// public clients send ({user, how, page: 1}), dry runs, budgets and formats; the sandbox
// serves them, by username and by numeric id.

const sb = useSandbox();
const stubs = useStubs();
const key = 'secret-key-123456';

const PUBLIC = [
  { command: 'metadata follower-count', path: 'metadata/get_follower_count', cost: 2 },
  { command: 'metadata past-usernames', path: 'metadata/get_past_usernames', cost: 3 },
  { command: 'metadata latest', path: 'metadata/get_latest_metadata', cost: 1 },
  { command: 'metadata current', path: 'metadata/get_current_metadata', cost: 6 },
  { command: 'metadata current-followers', path: 'metadata/get_current_num_followers', cost: 6 },
  { command: 'metadata current-following', path: 'metadata/get_current_num_following', cost: 6 },
  { command: 'metadata current-tweets', path: 'metadata/get_current_num_tweets', cost: 6 },
] as const;

const argv = (command: string, ...rest: string[]) => [...command.split(' '), ...rest];

describe('the public routes as commands', () => {
  it.each(PUBLIC)('$command: $path in the route table at $cost credits, from the public credit table', ({ command, path, cost }) => {
    const route = ROUTES.find((r) => r.path === path);
    expect(route && commandName(route)).toBe(command);
    expect(route).toMatchObject({ cost, costAssumed: false, paginated: false, needsKey: true, subject: 'user' });
  });

  it('alpha classification: a price the table does not show is assumed, and a dry run says so', async () => {
    expect(ROUTES.find((r) => r.path === 'alpha/get_classification')).toMatchObject({ cost: 1, costAssumed: true, paginated: false });
    const dry = await runSgq(['alpha', 'classification', 'jack', 'dorsey', '--dry-run'], { env: sb.env() });
    expect(dry.code).toBe(0);
    expect(dry.stderr).toContain("worst case 2 credits (2 calls × 1 credit; price: sgq's assumption, the public credit table gives none)");
  });

  it.each(PUBLIC)('$command sends {user, how, page: 1}, as the public clients do', async ({ command, path }) => {
    const stub = await stubs([{ body: { user: '12345', how: 'userid', data: [{ username: 'a' }], current_credits: 7 } }]);
    const r = await runSgq(argv(command, '12345', '--how', 'userid'), { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: key } });
    expect(r.code).toBe(0);
    expect(stub.requests.map((q) => q.url)).toEqual([`/api/${path}`]);
    expect(stub.bodies()).toEqual([{ user: '12345', how: 'userid', page: 1 }]);
    expect(r.stdout).toBe('{"username":"a"}\n');
  });

  it.each(PUBLIC)('$command: a dry run shows the body and the published price, and sends nothing', async ({ command, path, cost }) => {
    const stub = await stubs([]);
    const r = await runSgq(argv(command, 'jack', '--dry-run'), { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: key } });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`sgq: would send POST ${stub.url}/api/${path} {"user":"jack","how":"username","page":1}`);
    expect(r.stderr).toContain(`worst case ${cost} credit${cost === 1 ? '' : 's'} (1 call × ${cost} credit${cost === 1 ? '' : 's'}; price: the service's public credit table, read 2026-11-24)`);
    expect(stub.requests).toHaveLength(0);
  });

  it('--max-credits stops (exit 0, a limit you set) before the call that would pass it: 6 credits a call, a budget of 13 pays two users of three', async () => {
    const r = await runSgq(['metadata', 'current', 'jack', 'dorsey', 'ann', '--max-credits', '13', '--concurrency', '1'], { env: sb.env() });
    expect(r.code).toBe(0);
    expect(ndjson(r.stdout).map((x) => x.query_user)).toEqual(['jack', 'dorsey']);
    expect(r.stderr).toContain('12 credits spent, the next call costs 6 credits');
  });

  it('the sandbox charges each its price', async () => {
    const r = await runSgq(['metadata', 'follower-count', 'jack', 'dorsey', '-v'], { env: sb.env() });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('4 credits used');
  });
});

describe('their records on the sandbox', () => {
  const fieldsOf = (path: string) => {
    const route = ROUTES.find((r) => r.path === path)!;
    return Object.keys(RECORD_FIELDS[route.records]);
  };

  it.each([...PUBLIC, { command: 'alpha classification', path: 'alpha/get_classification' }])('$command: the described fields, no others', async ({ command, path }) => {
    const r = await runSgq(argv(command, 'jack'), { env: sb.env() });
    expect(r.code).toBe(0);
    const records = ndjson(r.stdout);
    expect(records.length).toBeGreaterThan(0);
    for (const record of records) expect(Object.keys(record).sort()).toEqual(fieldsOf(path).sort());
  });

  it('metadata records carry the follower fields without the prefix; past usernames are username and last_checked', () => {
    expect(fieldsOf('metadata/get_latest_metadata')).toEqual(Object.keys(RECORD_FIELDS.following));
    expect(fieldsOf('metadata/get_current_metadata')).toEqual(Object.keys(RECORD_FIELDS.following));
    expect(fieldsOf('metadata/get_past_usernames')).toEqual(['username', 'last_checked']);
  });

  it('agree with the other routes of the same account: its id and its followers', async () => {
    const env = sb.env();
    const [id] = ndjson((await runSgq(['metadata', 'userid', 'jack'], { env })).stdout);
    const latestText = (await runSgq(['metadata', 'latest', 'jack'], { env })).stdout;
    const [latest] = ndjson(latestText);
    const followers = lines((await runSgq(['graph', 'followers', 'jack', '--all'], { env })).stdout).length;
    const [count] = ndjson((await runSgq(['metadata', 'follower-count', 'jack'], { env })).stdout);
    const [current] = ndjson((await runSgq(['metadata', 'current-followers', 'jack'], { env })).stdout);
    // The id past 2^53, read from the text: JSON.parse would round it.
    expect(latestText).toContain(`"userid":${id!.user_id as string},`);
    expect([latest!.num_followers, count!.num_followers, current!.num_followers]).toEqual([followers, followers, followers]);
  });

  it('are served by numeric id too (how: userid), the id kept digit for digit', async () => {
    const r = await runSgq(['metadata', 'latest', '1234567890123456789', '--how', 'userid'], { env: sb.env() });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('"userid":1234567890123456789,');
    const none = await runSgq(['metadata', 'follower-count', 'jack', '--how', 'userid'], { env: sb.env() });
    expect(none.code).toBe(4);
    expect(none.stderr).toContain('no data for userid = jack');
  });

  it('print in every format', async () => {
    const env = sb.env();
    const csv = await runSgq(['metadata', 'past-usernames', 'jack', 'dorsey', '-o', 'csv', '--fields', 'query_user,username'], { env });
    expect(csv.code).toBe(0);
    expect(csv.stdout).toMatch(/^query_user,username\r\njack,\w+\r\n/);
    const json = await runSgq(['alpha', 'classification', 'jack', '-o', 'json'], { env });
    expect(JSON.parse(json.stdout)[0]).toHaveProperty('classification');
    const jq = await runSgq(['metadata', 'current-tweets', 'jack', '--jq', '.num_tweets'], { env });
    expect(jq.stdout).toMatch(/^\d+\n$/);
  });
});
