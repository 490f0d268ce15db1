import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sgq } from '../helpers/e2e.js';
import { lines, tempDir } from '../helpers/run.js';
import { envelope, useStubs, type Recorded, type Reply } from '../helpers/stub-server.js';
import { until } from '../helpers/wait.js';

// Prices learned from balances when other sgq processes spend from the same account (issue 32):
// real processes of the built binary against one loopback service that keeps one balance.

const stubs = useStubs();

/**
 * One account charging `price` a call with data. The graph calls of the users in `turns` are
 * answered in turns, one user after the other (round robin, each waiting for its turn), as
 * three cron jobs interleave their calls; they have `pages` pages. Any other user (40 pages)
 * is answered at once, and `hang` users never.
 */
function account(price: number, options: { turns?: string[]; pages?: number; hang?: string[] } = {}) {
  const state = { balance: 100_000, paid: 0, asked: new Set<string>() };
  const rotation = [...(options.turns ?? [])];
  // The users in turns have `pages` pages; the others 40.
  const pagesOf = (user: string) => (options.turns?.includes(user) ? (options.pages ?? 40) : 40);
  const waiting = new Map<string, () => void>();
  let turn = 0;
  const pump = () => {
    // The first round starts once every user of the rotation has asked.
    if (rotation.some((u) => !state.asked.has(u))) return;
    while (rotation.length > 0) {
      turn %= rotation.length;
      const go = waiting.get(rotation[turn]!);
      if (!go) return;
      waiting.delete(rotation[turn]!);
      go();
    }
  };
  const charge = (user: string, page: number): Reply => {
    state.balance -= price;
    state.paid++;
    return { body: envelope(page, page < pagesOf(user) ? page + 1 : null, [{ username: `${user}-${page}` }], state.balance, user) };
  };
  const answer = (req: Recorded): Reply | Promise<Reply> => {
    if (req.method !== 'POST') return { status: 404, body: { message: 'not found' } };
    const body = JSON.parse(req.body) as { user: string; page?: number };
    if (req.url.endsWith('/metadata/get_userid')) return { body: { data: [{ error: `no data for username = ${body.user}` }], current_credits: state.balance } };
    state.asked.add(body.user);
    if (options.hang?.includes(body.user)) return 'hang';
    const page = body.page ?? 1;
    if (!rotation.includes(body.user)) return charge(body.user, page);
    return new Promise<Reply>((resolve) => {
      waiting.set(body.user, () => {
        resolve(charge(body.user, page));
        // The user's last page leaves the rotation; the next user's turn comes.
        if (page >= pagesOf(body.user)) rotation.splice(rotation.indexOf(body.user), 1);
        else turn++;
      });
      pump();
    });
  };
  return { state, answer };
}

const envFor = (url: string, dir: string) => ({ SGQ_BASE_URL: url, SGQ_API_KEY: 'k', SGQ_CONFIG_DIR: dir });

async function pricesOf(env: Record<string, string>): Promise<Record<string, number> | undefined> {
  const r = await sgq(['credits', '--json'], { env });
  expect(r.exitCode).toBe(0);
  return (JSON.parse(r.stdout) as { prices?: Record<string, number> }).prices;
}

describe('prices learned while other sgq processes spend from the same account', () => {
  it('three processes whose calls interleave store no price (not 9 a call); a later --max-credits 48 run fetches 16 pages', async () => {
    const users = ['cron_a', 'cron_b', 'cron_c'];
    const { state, answer } = account(3, { turns: users, pages: 6 });
    const stub = await stubs(answer);
    const env = envFor(stub.url, tempDir());
    const runs = await Promise.all(users.map((user) => sgq(['graph', 'followers', user, '--all'], { env })));
    expect(runs.map((r) => [r.exitCode, lines(r.stdout).length])).toEqual(users.map(() => [0, 6]));
    for (const r of runs) expect(r.stderr).not.toContain('a call (the balance went');
    expect(state.paid).toBe(18);
    const learned = await pricesOf(env);
    expect(learned?.['graph/get_followers'] ?? 3).toBe(3);

    const later = await sgq(['graph', 'followers', 'later', '--all', '--max-credits', '48'], { env });
    expect(later.exitCode).toBe(0);
    expect(lines(later.stdout)).toHaveLength(16);
    expect(later.stderr).toContain('stopped before the next call could pass --max-credits 48 (48 credits spent, the next call costs 3 credits)');
  });

  it('a process killed with kill -9 in the middle of a call does not keep the next ones from learning', async () => {
    const { state, answer } = account(4, { hang: ['victim'] });
    const stub = await stubs(answer);
    const dir = tempDir();
    const env = envFor(stub.url, dir);
    const victim = sgq(['graph', 'followers', 'victim', '--all'], { env });
    await until(() => state.asked.has('victim'), 'the victim to send its call');
    victim.kill('SIGKILL');
    expect((await victim).signal).toBe('SIGKILL');

    const solo = await sgq(['graph', 'followers', 'solo', '--all', '--max-pages', '6'], { env });
    expect(solo.exitCode).toBe(0);
    expect(solo.stderr).toContain('graph/get_followers cost 4 credits a call');
    expect(await pricesOf(env)).toMatchObject({ 'graph/get_followers': 4 });
    // What the killed process left in the ledger is gone.
    const ledgers = readdirRecursive(join(dir, 'credits')).filter((p) => p.endsWith('.call'));
    expect(ledgers).toEqual([]);
  });
});

function readdirRecursive(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? readdirRecursive(path) : [path];
  });
}
