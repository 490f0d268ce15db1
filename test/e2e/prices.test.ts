import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readObservedPrices } from '../../src/cli/run/credits-store.js';
import { SANDBOX_SERVICE } from '../../src/core/service.js';
import { sgq, useSandboxProcess } from '../helpers/e2e.js';
import { lines, tempDir } from '../helpers/run.js';

const sb = useSandboxProcess();

/** The balance the sandbox reports now, read with the free call. */
async function balance(env: Record<string, string>): Promise<number> {
  const r = await sgq(['credits', '--refresh'], { env });
  expect(r.exitCode).toBe(0);
  return Number(r.stdout);
}

describe('prices end to end, against `sgq sandbox` (it charges the public prices)', () => {
  it('--max-credits 5 spends 3 credits, stops before the second call, and its resume fetches the rest', async () => {
    const env = { ...sb.env(), SGQ_CONFIG_DIR: tempDir() };
    const start = await balance(env);
    const first = await sgq(['graph', 'followers', 'big_1200', '--all', '--max-credits', '5'], { env });
    expect(first.exitCode).toBe(0);
    expect(lines(first.stdout)).toHaveLength(500);
    expect(await balance(env)).toBe(start - 3);
    const resume = /with a new budget, resume with: sgq (.+)$/m.exec(first.stderr)?.[1];
    expect(resume).toBe('graph followers big_1200 --page 2 --all');
    expect(first.stderr).toContain('sgq: stopped before the next call could pass --max-credits 5 (3 credits spent, the next call costs 3 credits)');

    const rest = await sgq([...resume!.split(' '), '--summary', 'json'], { env });
    expect(rest.exitCode).toBe(0);
    expect(lines(rest.stdout)).toHaveLength(700);
    // Two pages at 3 credits, measured from the balances: the summary and the account agree.
    const summary = JSON.parse(lines(rest.stderr).at(-1)!) as { totals: { credits_used: number; credits_left: number } };
    expect(summary.totals.credits_used).toBe(6);
    expect(summary.totals.credits_left).toBe(start - 9);
    expect(await balance(env)).toBe(start - 9);
  });

  it('--dry-run prices the run with SGQ_PRICES, and a bad pair is one line, exit 3', async () => {
    const env = { ...sb.env(), SGQ_PRICES: 'graph/get_following=4' };
    const dry = await sgq(['graph', 'following', 'jack', '--all', '--limit', '1000', '--dry-run'], { env });
    expect(dry.exitCode).toBe(0);
    expect(dry.stderr).toContain('at most 2 calls; worst case 8 credits (2 calls × 4 credits; price: the prices setting)');
    const bad = await sgq(['graph', 'following', 'jack'], { env: { ...env, SGQ_PRICES: 'graph/get_following=4;metadata/get_tweets=1' } });
    expect(bad.exitCode).toBe(3);
    expect(lines(bad.stderr)).toHaveLength(1);
    expect(bad.stderr).toMatch(/^sgq: invalid prices pair "graph\/get_following=4;metadata\/get_tweets=1": the price must be a whole number/);
  });

  it('a run keeps the balance it saw; the prices it confirmed at the table figure are kept beside it', async () => {
    const dir = tempDir();
    const env = { ...sb.env(), SGQ_CONFIG_DIR: dir };
    const r = await sgq(['metadata', 'history', 'jack', 'bob', 'carol', '--concurrency', '1'], { env });
    expect(r.exitCode).toBe(0);
    // No message: the sandbox charges what the table says.
    expect(r.stderr).not.toContain('a call (the balance went');
    // Kept as the sandbox's: `sgq sandbox` says so in every answer.
    const stored = readObservedPrices(join(dir, 'config.json'), { service: SANDBOX_SERVICE, profile: 'default' });
    expect(stored.get('metadata/get_metadata_history')).toBe(2);
  });
});
