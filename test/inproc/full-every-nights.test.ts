// `--full-every N` over twelve nights of the sandbox's churn (issue 37's "done means"): a
// 5,000-follower account whose list gains accounts every night and loses some (and flickers),
// tracked by two nightly jobs side by side: one fetching the whole list every night, one with
// `--full-every 4`. The second pays at most 40% of the first's pages, reports every account
// that came on the night it came, every account that left on the next whole night (with the
// window it left in), and never a gain or a loss that the lists do not show.
import { describe, expect, it } from 'vitest';
import { DEMO_KEY, startSandbox } from '../../src/sandbox/server.js';
import { ndjson, runSgq, tempDir } from '../helpers/run.js';

const DAY = 86_400_000;
const FIRST = Date.parse('2026-11-01T03:15:00Z');
const USER = 'churn_5000';
const ROUTE = 'graph/get_followers';
const nightAt = (night: number) => new Date(FIRST + (night - 1) * DAY);

interface Said {
  gained: Set<string>;
  lost: Map<string, Record<string, unknown>>;
}

/** The changes a night printed, by username (the sandbox's handles are unique in a list). */
function changesOf(stdout: string): Said {
  const said: Said = { gained: new Set(), lost: new Map() };
  for (const c of ndjson(stdout)) {
    const name = String(c.follower_username);
    if (c.change === 'gained') said.gained.add(name);
    if (c.change === 'lost') said.lost.set(name, c);
  }
  return said;
}

/** USER's followers as the sandbox serves them now: username → when it came (its last_checked). */
async function listAt(url: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (let page = 1; ; page++) {
    const res = await fetch(`${url}/api/${ROUTE}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': DEMO_KEY }, body: JSON.stringify({ user: USER, how: 'username', page }) });
    const body = (await res.json()) as { next_page: number | null; data: Record<string, unknown>[] };
    for (const r of body.data) out.set(String(r.follower_username), Date.parse(String(r.follower_last_checked)));
    if (body.next_page === null) return out;
  }
}

describe('--full-every 4 over twelve nights of the sandbox churn', () => {
  it('pays at most 40% of the pages of whole nightly runs, reports each gain on its night and each loss on the next whole night, and nothing that did not happen', async () => {
    let now = nightAt(1);
    const sandbox = await startSandbox({ churn: 0.02, clock: () => now, ttlMs: 300_000 });
    try {
      const env = { SGQ_BASE_URL: sandbox.url, SGQ_API_KEY: DEMO_KEY, SGQ_CONFIG_DIR: tempDir(), SGQ_RETRIES: '0' };
      const [wholeDir, every4Dir] = [tempDir('sgq-whole-'), tempDir('sgq-every4-')];
      const pages = () => sandbox.calls.get(ROUTE) ?? 0;
      const nightly = async (dir: string, extra: string[]) => {
        const before = pages();
        const r = await runSgq(['graph', 'followers', USER, '--all', '--snapshot', '--changes', '--snapshot-dir', dir, ...extra], { env, now: () => now });
        expect(r.code, r.stderr).toBe(0);
        return { said: changesOf(r.stdout), pages: pages() - before };
      };
      const spent = { whole: 0, every4: 0 };
      const lists: Map<string, number>[] = [];
      /** The night each account was reported gained by the --full-every job. */
      const gainedOn = new Map<string, number>();
      let lastWhole = 1;
      for (let night = 1; night <= 12; night++) {
        now = nightAt(night);
        const whole = await nightly(wholeDir, []);
        const every4 = await nightly(every4Dir, ['--full-every', '4']);
        spent.whole += whole.pages;
        spent.every4 += every4.pages;
        const list = await listAt(sandbox.url);
        lists.push(list);
        for (const name of every4.said.gained) gainedOn.set(name, night);
        if (night === 1) continue;
        const previous = lists[night - 2]!;
        // Accounts that came since the night before (their arrival after its run): reported tonight, whole night or not.
        const came = [...list.keys()].filter((name) => !previous.has(name));
        const arrived = came.filter((name) => list.get(name)! >= nightAt(night - 1).getTime());
        expect(arrived.length, `night ${night}: accounts came`).toBeGreaterThan(20);
        for (const name of arrived) expect(every4.said.gained.has(name), `night ${night}: ${name} came and was not reported`).toBe(true);
        if ((night - 1) % 4 !== 0) {
          // A night between whole ones: what came since the last run, one page; no loss.
          for (const name of every4.said.gained) expect(came.includes(name), `night ${night}: ${name} reported gained`).toBe(true);
          expect(every4.said.lost.size, `night ${night}: a partial night reports no loss`).toBe(0);
          expect(every4.pages, `night ${night}: one page for what came since`).toBe(1);
          continue;
        }
        // A whole night: every account the last whole night held, and every one reported since, that is not here now.
        const held = lists[lastWhole - 1]!;
        const seen = new Set([...held.keys(), ...[...gainedOn].filter(([, on]) => on > lastWhole && on < night).map(([name]) => name)]);
        for (const name of every4.said.gained) expect(list.has(name) && !seen.has(name), `night ${night}: ${name} reported gained`).toBe(true);
        for (const name of seen) if (!list.has(name)) expect(every4.said.lost.has(name), `night ${night}: ${name} left since the last whole night and was not reported`).toBe(true);
        expect(every4.said.lost.size, `night ${night}: accounts left`).toBeGreaterThan(20);
        for (const [name, change] of every4.said.lost) {
          expect(list.has(name) || !seen.has(name), `night ${night}: ${name} reported lost`).toBe(false);
          // Left after the last whole night that held it (or the night it came, after that one), before tonight.
          expect(change.left_after).toBe(nightAt(held.has(name) ? lastWhole : gainedOn.get(name)!).toISOString());
          expect(change.left_before).toBe(now.toISOString());
        }
        lastWhole = night;
      }
      expect(spent.every4, `--full-every 4 paid ${spent.every4} pages, whole nightly runs ${spent.whole}`).toBeLessThanOrEqual(0.4 * spent.whole);
    } finally {
      await sandbox.close();
    }
  }, 120_000);
});
