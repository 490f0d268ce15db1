import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEY, startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { sgq } from '../helpers/e2e.js';
import { lines, tempDir } from '../helpers/run.js';

// `plan trial` paces the calls of every run of a profile on this machine within the route's
// hourly limit (a shared file of call times, under a lock), so two runs at once, 12 calls
// against a limit of 3, are never refused by a sandbox acting as a trial account. The hour is
// 1.5 s here (SGQ_TRIAL_HOUR_MS), for sgq and the sandbox alike.

const HOUR_MS = 1500;
let box: Sandbox;
beforeAll(async () => {
  box = await startSandbox({ faults: { trialLimits: { 'graph/get_followers': 3 }, trialHourMs: HOUR_MS } });
});
afterAll(async () => {
  await box.close();
});

describe('plan trial across processes', () => {
  it('two runs at once, 3 users × 2 pages each, stay within 3 calls an hour: no refusal', async () => {
    const env = { SGQ_BASE_URL: box.url, SGQ_API_KEY: DEMO_KEY, SGQ_CONFIG_DIR: tempDir(), SGQ_PLAN: 'trial', SGQ_RATE_LIMITS: 'graph/get_followers=3', SGQ_TRIAL_HOUR_MS: String(HOUR_MS) };
    const runs = await Promise.all([
      sgq(['graph', 'followers', 'a_600', 'b_600', 'c_600', '--all'], { env }),
      sgq(['graph', 'followers', 'd_600', 'e_600', 'f_600', '--all'], { env }),
    ]);
    for (const run of runs) {
      expect(run.exitCode).toBe(0);
      // A pipe gets one line per wait for a slot, and nothing else.
      expect(lines(run.stderr).filter((l) => !l.includes('graph/get_followers is paced to 3 requests an hour (plan trial)'))).toEqual([]);
      expect(lines(run.stdout)).toHaveLength(1800);
    }
    expect(box.calls.get('graph/get_followers')).toBe(12);
    expect(box.refused.get('graph/get_followers') ?? 0).toBe(0);
  }, 120_000);

  it('`sgq sandbox --trial-limits` answers the trial 429, and sgq stops with exit 9', async () => {
    const started = sgq(['sandbox', '--port', '0', '--ttl', '60', '--trial-limits', 'graph/get_followers=1', '-q'], { timeout: 60_000 });
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      started.stdout!.on('data', (c: Buffer) => {
        out += c.toString();
        const m = /SGQ_BASE_URL=(\S+)/.exec(out);
        if (m) resolve(m[1]!);
      });
      void started.then((r) => reject(new Error(`sandbox exited early: ${r.stderr}`)));
    });
    try {
      const env = { SGQ_BASE_URL: url, SGQ_API_KEY: DEMO_KEY };
      const r = await sgq(['graph', 'followers', 'a_3', 'b_3', '--concurrency', '1'], { env });
      expect(r.exitCode).toBe(9);
      expect(lines(r.stderr)).toHaveLength(1);
      expect(r.stderr).toContain('graph/get_followers allows 1 request an hour');
      expect(lines(r.stdout)).toHaveLength(3);
      expect(r.stderr).toContain("1 user not finished; resume it then with: printf '%s\\n' b_3 | sgq graph followers -");
    } finally {
      started.kill('SIGTERM');
    }
  });
});
