import { execaSync } from 'execa';
import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEMO_KEY } from '../../src/sandbox/server.js';
import { creditsFolder } from '../../src/cli/run/credits-store.js';
import { SANDBOX_SERVICE } from '../../src/core/service.js';
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
