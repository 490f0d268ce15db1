import { execaSync } from 'execa';
import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEMO_KEY } from '../../src/sandbox/server.js';
import { creditsFolder } from '../../src/cli/run/credits-store.js';
import { SANDBOX_SERVICE, serviceOf } from '../../src/core/service.js';
import { lines, runSgq, tempDir } from '../helpers/run.js';
import { useStubs } from '../helpers/stub-server.js';
import { useSandbox } from '../helpers/sandbox.js';
import { onLinuxAsRoot } from '../helpers/tmpfs.js';

const sb = useSandbox();
const stubs = useStubs();
/** The note of the default profile on the sandbox, in the config folder `dir`. */
const noteIn = (dir: string) => join(creditsFolder(join(dir, 'config.json'), { service: SANDBOX_SERVICE, profile: 'default' })!, 'note.json');
const calls = () => [...sb.sandbox.calls.values()].reduce((a, b) => a + b, 0);

describe('sgq credits', () => {
  it('shows the balance the last run saw, when and on which route, without a call', async () => {
    const dir = tempDir();
    const env = { ...sb.env(), SGQ_CONFIG_DIR: dir };
    const none = await runSgq(['credits'], { env });
    expect(none.code).toBe(3);
    expect(lines(none.stderr)[0]).toContain('no balance seen yet for profile default');

    const run = await runSgq(['graph', 'followers', 'jack', '--limit', '1', '--summary', 'json'], { env });
    const left = (JSON.parse(lines(run.stderr).at(-1)!) as { totals: { credits_left: number } }).totals.credits_left;
    const before = calls();
    const shown = await runSgq(['credits'], { env });
    expect(calls()).toBe(before);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toBe(`${left}\n`);
    const json = JSON.parse((await runSgq(['credits', '--json'], { env })).stdout) as Record<string, unknown>;
    expect(json).toMatchObject({ profile: 'default', service: SANDBOX_SERVICE, credits: left, route: 'graph/get_followers', base_url: sb.sandbox.url });
    expect(Date.now() - Date.parse(json.seen_at as string)).toBeGreaterThanOrEqual(0);

    // The store: beside the config, 0600, and no key in it.
    const file = noteIn(dir);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).not.toContain(DEMO_KEY);
  });

  it('keeps one balance per profile', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ profiles: { work: { 'base-url': sb.sandbox.url, 'api-key': DEMO_KEY } } }));
    const env = { SGQ_CONFIG_DIR: dir };
    expect((await runSgq(['--profile', 'work', 'metadata', 'latest-tweets', 'jack'], { env })).code).toBe(0);
    expect((await runSgq(['--profile', 'work', 'credits', '--json'], { env })).stdout).toContain('"route":"metadata/get_latest_tweets"');
    expect((await runSgq(['credits'], { env })).code).toBe(3);
  });

  it('--refresh asks with the free route and records what it answered', async () => {
    const env = { ...sb.env(), SGQ_CONFIG_DIR: tempDir() };
    const before = sb.sandbox.calls.get('metadata/get_userid') ?? 0;
    const first = await runSgq(['credits', '--refresh'], { env });
    expect(first.code).toBe(0);
    expect(sb.sandbox.calls.get('metadata/get_userid')).toBe(before + 1);
    // Free: the tests of a file run one at a time, so nothing else spends in between.
    expect((await runSgq(['credits', '--refresh'], { env })).stdout).toBe(first.stdout);
    const stored = JSON.parse((await runSgq(['credits', '--json'], { env })).stdout) as { credits: number; route: string };
    expect(stored).toMatchObject({ credits: Number(first.stdout), route: 'metadata/get_userid' });
  });

  it("a run that does not see a balance changes nothing; a --sandbox run records the sandbox's, not the profile's service's", async () => {
    const stub = await stubs(() => ({ body: { data: [] } }));
    const env = { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k', SGQ_CONFIG_DIR: tempDir() };
    expect((await runSgq(['info'], { env })).code).toBe(0);
    expect((await runSgq(['--sandbox', 'graph', 'followers', 'jack', '--limit', '1'], { env })).code).toBe(0);
    const none = await runSgq(['credits'], { env });
    expect(none.code).toBe(3);
    expect(lines(none.stderr)).toEqual([`sgq: no balance seen yet for profile default at ${stub.url}; any run of a paid route records it, or ask with \`sgq credits --refresh\` (free)`]);
    expect((await runSgq(['--sandbox', 'credits'], { env })).code).toBe(0);
  });
});

describe('the note of the balance', () => {
  const balanceIn = (file: string) => (JSON.parse(readFileSync(file, 'utf8')) as { balance: { credits: number } }).balance.credits;

  it('makes its folder (0700) when the config folder does not exist yet, and the next run writes over the file it finds', async () => {
    const dir = join(tempDir(), 'not', 'yet');
    const env = { ...sb.env(), SGQ_CONFIG_DIR: dir };
    expect((await runSgq(['graph', 'followers', 'jack', '--limit', '1'], { env })).code).toBe(0);
    const file = noteIn(dir);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(dirname(file)).mode & 0o777).toBe(0o700);
    const first = balanceIn(file);
    expect((await runSgq(['graph', 'followers', 'jack', '--limit', '1'], { env })).code).toBe(0);
    expect(balanceIn(file)).toBeLessThan(first);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(dirname(file)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('a damaged file is written afresh', async () => {
    const dir = tempDir();
    const file = noteIn(dir);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, '{"balance": {"credits": ');
    expect((await runSgq(['graph', 'followers', 'jack', '--limit', '1'], { env: { ...sb.env(), SGQ_CONFIG_DIR: dir } })).code).toBe(0);
    expect(balanceIn(file)).toBeGreaterThan(0);
  });

  it('a folder it cannot make or write loses the note only: the run succeeds, a warning says why', async () => {
    const blocker = join(tempDir(), 'a-file');
    writeFileSync(blocker, 'not a folder');
    // A config folder under a regular file cannot be made, by root either.
    const env = { ...sb.env(), SGQ_CONFIG_DIR: join(blocker, 'sgq') };
    const run = await runSgq(['graph', 'followers', 'jack', '--limit', '1'], { env });
    expect(run.code).toBe(0);
    expect(run.stdout).not.toBe('');
    expect(lines(run.stderr)).toContainEqual(expect.stringMatching(/^sgq: cannot record the balance and prices in .*credits\/@sandbox\/default: a part of its path is not a folder \(ENOTDIR\); check the path \S+; `sgq credits` shows the last ones recorded$/));
  });

  // Root ignores file modes: there the folder is made read-only by a read-only bind mount of itself.
  it.skipIf(process.platform === 'win32' || (process.getuid?.() === 0 && !onLinuxAsRoot))('a read-only config folder holding the file loses the note only', async () => {
    const dir = tempDir();
    const env = { ...sb.env(), SGQ_CONFIG_DIR: dir };
    expect((await runSgq(['graph', 'followers', 'jack', '--limit', '1'], { env })).code).toBe(0);
    const file = noteIn(dir);
    const folder = dirname(file);
    const before = readFileSync(file, 'utf8');
    const readOnly = onLinuxAsRoot ? bindReadOnly(folder) : (chmodSync(folder, 0o500), () => chmodSync(folder, 0o700));
    try {
      const run = await runSgq(['graph', 'followers', 'jack', '--limit', '1'], { env });
      expect(run.code).toBe(0);
      expect(run.stderr).toMatch(/cannot record the balance and prices in .*credits\/@sandbox\/default: (permission denied \(EACCES\)|the file system is read-only \(EROFS\))/);
      expect(readFileSync(file, 'utf8')).toBe(before);
    } finally {
      readOnly();
    }
  });
});

describe('a balance that is not a finite number', () => {
  /** A one-page answer whose balance is written `credits`, as the service's text. */
  const pageWith = (credits: string) => ({
    text: `{"user":"jack","how":"username","page":1,"previous_page":null,"next_page":null,"page_items":1,"data":[{"follower_username":"a","follower_id":"1"}],"current_credits":${credits}}`,
  });
  const noteOf = (dir: string, url: string) => join(creditsFolder(join(dir, 'config.json'), { service: serviceOf(url), profile: 'default' })!, 'note.json');

  it.each(['1e400', '-1e400', '1E+400'])('current_credits %s is refused as a string is (exit 7), and sgq credits still answers', async (credits) => {
    const stub = await stubs(() => pageWith(credits));
    const dir = tempDir();
    const env = { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k', SGQ_CONFIG_DIR: dir, SGQ_WARN_CREDITS: '5' };
    const run = await runSgq(['graph', 'followers', 'jack', '--retries', '0'], { env });
    expect(run.code).toBe(7);
    expect(lines(run.stderr)).toEqual([expect.stringContaining(`the service sent an unexpected body: current_credits is ${credits}, not a finite number`)]);
    expect(run.stderr).not.toMatch(/∞|Infinity|internal error/);
    // Nothing recorded: no note holding null.
    expect(() => readFileSync(noteOf(dir, stub.url), 'utf8')).toThrow(/ENOENT/);
    const shown = await runSgq(['credits'], { env });
    expect(shown.code).toBe(3);
    expect(lines(shown.stderr)).toEqual([expect.stringContaining('no balance seen yet for profile default')]);
  });

  it('a string balance is refused the same way', async () => {
    const stub = await stubs(() => pageWith('"12"'));
    const run = await runSgq(['graph', 'followers', 'jack', '--retries', '0'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k' } });
    expect(run.code).toBe(7);
    expect(run.stderr).toContain('current_credits is "12", not a');
  });

  it('a balance written with more digits than a double holds is kept as the nearest number', async () => {
    const stub = await stubs(() => pageWith('996.99999999999999999999999999'));
    const dir = tempDir();
    const env = { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k', SGQ_CONFIG_DIR: dir };
    const run = await runSgq(['graph', 'followers', 'jack', '--summary', 'json'], { env });
    expect(run.code).toBe(0);
    expect((JSON.parse(lines(run.stderr).at(-1)!) as { totals: { credits_left: number } }).totals.credits_left).toBe(997);
    const shown = await runSgq(['credits'], { env });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toBe('997\n');
  });

  it('a huge balance is shown, and no price is learned from balances a double cannot hold exactly', async () => {
    // Each call costs 1 of 10^30 credits: as doubles, every balance is the same, a drop of 0.
    let left = 10n ** 30n;
    const stub = await stubs((req) => {
      const page = (JSON.parse(req.body) as { page?: number }).page ?? 1;
      const next = page < 4 ? page + 1 : 'null';
      return { text: `{"user":"jack","page":${page},"next_page":${next},"data":[{"follower_username":"a${page}","follower_id":"${page}"}],"current_credits":${(left -= 1n)}}` };
    });
    const dir = tempDir();
    const env = { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k', SGQ_CONFIG_DIR: dir };
    const run = await runSgq(['graph', 'followers', 'jack', '--all'], { env });
    expect(run.code).toBe(0);
    expect(lines(run.stdout)).toHaveLength(4);
    expect(run.stderr).not.toContain('cost 0 credits');
    const shown = await runSgq(['credits', '--json'], { env });
    expect(shown.code).toBe(0);
    const json = JSON.parse(shown.stdout) as { credits: number; prices?: unknown };
    expect(json.credits).toBe(1e30);
    expect(json.prices).toBeUndefined();
  });
});

describe('a balance note that cannot be read', () => {
  const seen = { seen_at: '2026-01-01T00:00:00.000Z', route: 'graph/get_followers', base_url: 'http://127.0.0.1:1' };
  const damaged: [string, string][] = [
    ['not JSON', '{"balance": {"credits": '],
    ['null', 'null'],
    ['a list', '[]'],
    ['a null balance', JSON.stringify({ balance: { ...seen, credits: null } })],
    ['a string balance', JSON.stringify({ balance: { ...seen, credits: '12' } })],
    ['a balance past the double range', `{"balance": {"credits": 1e400, "seen_at": "${seen.seen_at}", "route": "r", "base_url": "u"}}`],
    ['a balance with no time', JSON.stringify({ balance: { credits: 12, route: 'r', base_url: 'u' } })],
    ['a balance that is a number', JSON.stringify({ balance: 12 })],
    ['prices of the wrong type', JSON.stringify({ balance: { ...seen, credits: 12 }, prices: [1] })],
    ['a price past the double range', `{"prices": {"graph/get_followers": {"credits": 1e400, "seen_at": "x"}}}`],
  ];

  it.each(damaged)('%s: sgq credits says so once and goes on as if there were none (never a crash)', async (_, text) => {
    const dir = tempDir();
    const file = noteIn(dir);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
    const env = { ...sb.env(), SGQ_CONFIG_DIR: dir };
    const shown = await runSgq(['credits'], { env });
    expect(shown.stderr).not.toMatch(/internal error|∞/);
    const said = lines(shown.stderr).filter((line) => line.includes(file));
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/^sgq: the balance note .* cannot be read \(.+\): ignored; the next run that sees a balance writes it afresh$/);
    // Whatever part could be read is shown; a note with no readable balance says none was seen.
    if (shown.code === 0) expect(Number.isFinite(Number(shown.stdout))).toBe(true);
    else expect(shown.code).toBe(3);
    expect((await runSgq(['credits', '--json'], { env })).stderr).not.toMatch(/internal error/);
    expect((await runSgq(['credits', '--forget-prices'], { env })).stderr).not.toMatch(/internal error/);

    // A run says it once, and writes the note afresh.
    const run = await runSgq(['graph', 'followers', 'jack', '--all', '--limit', '3', '--verbose'], { env });
    expect(run.code).toBe(0);
    expect(lines(run.stderr).filter((line) => line.includes(file))).toHaveLength(1);
    const after = await runSgq(['credits'], { env });
    expect(after.code).toBe(0);
    expect(after.stderr).not.toContain(file);
  });
});

describe('warn-credits', () => {
  it('warns on stderr, even with --quiet, when a run leaves fewer credits than the setting', async () => {
    const env = { ...sb.env(), SGQ_CONFIG_DIR: tempDir(), SGQ_WARN_CREDITS: String(10_000_000) };
    const low = await runSgq(['-q', 'graph', 'followers', 'jack', '--limit', '1'], { env });
    expect(low.code).toBe(0);
    expect(lines(low.stderr)).toHaveLength(1);
    expect(low.stderr).toMatch(/^sgq: only [\d,]+ credits left, fewer than warn-credits 10,000,000;/);
    const fine = await runSgq(['-q', 'graph', 'followers', 'jack', '--limit', '1'], { env: { ...env, SGQ_WARN_CREDITS: '5' } });
    expect(fine.stderr).toBe('');
  });

  it('is checked like every setting', async () => {
    const bad = await runSgq(['config', 'set', 'warn-credits', 'lots']);
    expect(bad.code).toBe(2);
  });
});

/** Makes a folder read-only for root too (a read-only bind mount of itself); returns the undo. */
function bindReadOnly(dir: string): () => void {
  execaSync('mount', ['--bind', dir, dir]);
  execaSync('mount', ['-o', 'remount,ro,bind', dir]);
  return () => void execaSync('umount', [dir], { reject: false });
}
