// The sandbox's churn (`sgq sandbox --churn RATE`, `SGQ_SANDBOX_CHURN`): followers come, go
// and flicker with the sandbox's clock, deterministically and with no state, while the pages
// of one clock time agree with each other and with the account's counts.
import { describe, expect, it } from 'vitest';
import { DEMO_KEY, startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { runSgq, tempDir } from '../helpers/run.js';

const DAY = 86_400_000;
const NIGHT = Date.parse('2026-11-01T03:15:00Z');

interface Body {
  next_page: number | null;
  page_items: number;
  data: Record<string, unknown>[];
}

async function post(sandbox: Sandbox, path: string, payload: Record<string, unknown>): Promise<{ text: string; body: Body }> {
  const res = await fetch(`${sandbox.url}/api/${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': DEMO_KEY }, body: JSON.stringify(payload) });
  const text = await res.text();
  return { text: text.replace(/"current_credits":\d+/, ''), body: JSON.parse(text) as Body };
}

/** Every follower of `user`, page by page, as the sandbox serves them now. */
async function followers(sandbox: Sandbox, user: string, extra: Record<string, unknown> = {}): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for (let page = 1; ; page++) {
    const { body } = await post(sandbox, 'graph/get_followers', { user, how: 'username', page, ...extra });
    out.push(...body.data);
    if (body.next_page === null) return out;
  }
}

/** A sandbox whose clock the test moves. */
async function churning(rate: number, at = NIGHT): Promise<{ sandbox: Sandbox; night: (n: number) => void }> {
  let now = new Date(at);
  const sandbox = await startSandbox({ churn: rate, clock: () => now, ttlMs: 120_000 });
  return { sandbox, night: (n) => void (now = new Date(at + n * DAY)) };
}

const names = (records: Record<string, unknown>[]) => new Set(records.map((r) => String(r.follower_username)));

describe('sgq sandbox --churn', () => {
  it('one clock time: pages agree, repeated calls give the same bytes, counts agree with the list, newest first', async () => {
    const { sandbox } = await churning(0.05);
    try {
      const list = await followers(sandbox, 'churn_1800');
      expect(names(list).size).toBe(list.length);
      expect(new Set(list.map((r) => String(r.follower_userid))).size).toBe(list.length);
      // About the usual 1,800, less those missing today.
      expect(list.length).toBeGreaterThan(1400);
      expect(list.length).toBeLessThan(2000);
      const times = list.map((r) => String(r.follower_last_checked));
      expect([...times].sort().reverse()).toEqual(times);
      const again = await post(sandbox, 'graph/get_followers', { user: 'churn_1800', how: 'username', page: 2 });
      const twice = await post(sandbox, 'graph/get_followers', { user: 'churn_1800', how: 'username', page: 2 });
      expect(again.text === twice.text).toBe(true);
      const count = await post(sandbox, 'metadata/get_current_num_followers', { user: 'churn_1800', how: 'username' });
      expect(count.body.data[0]!.num_followers).toBe(list.length);
      // `since` selects those that came since, a prefix of the list.
      const since = times[100]!;
      const recent = await followers(sandbox, 'churn_1800', { since });
      expect(recent.map((r) => r.follower_username)).toEqual(list.slice(0, recent.length).map((r) => r.follower_username));
      expect(recent.length).toBeGreaterThanOrEqual(101);
      expect(times[recent.length]! < since).toBe(true);
    } finally {
      await sandbox.close();
    }
  });

  it('night after night: gains, losses, and flickers (gone one night, back the next)', async () => {
    const { sandbox, night } = await churning(0.05);
    try {
      const nights: Set<string>[] = [];
      for (let n = 0; n < 4; n++) {
        night(n);
        nights.push(names(await followers(sandbox, 'churn_1800')));
      }
      const minus = (a: Set<string>, b: Set<string>) => [...a].filter((x) => !b.has(x));
      for (let n = 1; n < 4; n++) {
        expect(minus(nights[n]!, nights[n - 1]!).length, `gained on night ${n}`).toBeGreaterThan(20);
        expect(minus(nights[n - 1]!, nights[n]!).length, `lost on night ${n}`).toBeGreaterThan(20);
      }
      const flickers = (n: number) => minus(nights[n - 1]!, nights[n]!).filter((x) => nights[n + 1]!.has(x));
      expect(flickers(1).length + flickers(2).length).toBeGreaterThan(10);
      // And some leave for good: gone on night 1 and on every night after.
      expect(minus(nights[0]!, nights[1]!).filter((x) => !nights[2]!.has(x) && !nights[3]!.has(x)).length).toBeGreaterThan(5);
    } finally {
      await sandbox.close();
    }
  });

  it('no state: another sandbox at the same clock time serves the same list; no churn, the list is the same at any time', async () => {
    const a = await churning(0.05, NIGHT + 3 * DAY);
    const b = await churning(0.05, NIGHT + 3 * DAY);
    const still = await churning(0);
    try {
      expect(await followers(b.sandbox, 'jack')).toEqual(await followers(a.sandbox, 'jack'));
      const first = await followers(still.sandbox, 'jack');
      still.night(5);
      const later = await followers(still.sandbox, 'jack');
      expect(names(later)).toEqual(names(first));
      expect(first).toHaveLength(673);
    } finally {
      await Promise.all([a.sandbox.close(), b.sandbox.close(), still.sandbox.close()]);
    }
  });
});

describe('SGQ_SANDBOX_CHURN and --churn', () => {
  it('sgq --sandbox with SGQ_SANDBOX_CHURN serves churned lists; a bad rate is one line (exit 3 for the variable, 2 for the flag)', async () => {
    const env = { SGQ_CONFIG_DIR: tempDir() };
    const plain = await runSgq(['--sandbox', 'graph', 'followers', 'jack', '--limit', '1'], { env });
    const churned = await runSgq(['--sandbox', 'graph', 'followers', 'jack', '--limit', '1'], { env: { ...env, SGQ_SANDBOX_CHURN: '0.05' } });
    expect(plain.code).toBe(0);
    expect(churned.code).toBe(0);
    // Unchurned, jack's newest follower is the list's first account (`…_0`); churned, one that came lately.
    expect(JSON.parse(plain.stdout).follower_username).toMatch(/_0$/);
    expect(JSON.parse(churned.stdout).follower_username).not.toMatch(/_0$/);
    const bad = await runSgq(['--sandbox', 'graph', 'followers', 'jack'], { env: { ...env, SGQ_SANDBOX_CHURN: 'lots' } });
    expect(bad.code).toBe(3);
    expect(bad.stderr).toBe('sgq: invalid SGQ_SANDBOX_CHURN "lots"; use a fraction from 0 to 1 (0.05: about 5% of a list leaves each day), or unset it\n');
    const flag = await runSgq(['sandbox', '--churn', '2'], { env });
    expect(flag.code).toBe(2);
    expect(flag.stderr).toMatch(/--churn/);
  });
});
