import { afterEach, describe, expect, it } from 'vitest';
import { DEMO_KEY, EXPIRED_KEY, startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { lines, ndjson, runSgq } from '../helpers/run.js';

const open: Sandbox[] = [];
afterEach(async () => {
  for (const box of open.splice(0)) await box.close();
});

/** A sandbox whose first data request is a 429 asking to wait 3 s. */
async function rateLimited(): Promise<Sandbox> {
  const box = await startSandbox({ ttlMs: 60_000, faults: { failFirst: 1, failStatus: 429, retryAfter: 3 } });
  open.push(box);
  return box;
}

// sgq's own cap on Retry-After is lowered to 1 s here, so a Retry-After of 3 s is past it.
const envFor = (box: Sandbox, key = DEMO_KEY) => ({ SGQ_BASE_URL: box.url, SGQ_API_KEY: key, SGQ_RETRY_AFTER_CAP: '1' });

describe('--max-wait', () => {
  it('without it, a Retry-After past the cap fails at once and says how to wait', async () => {
    const box = await rateLimited();
    const r = await runSgq(['graph', 'followers', 'jack'], { env: envFor(box) });
    expect(r.code).toBe(7);
    expect(lines(r.stderr)).toHaveLength(1);
    expect(r.stderr).toContain('it asks to wait 3s, longer than sgq waits; try again later, or let sgq wait for it with --max-wait DURATION');
    expect(box.calls.get('graph/get_followers')).toBe(1);
  });

  it('waits out a Retry-After: 3 and ends with the records, saying so in one line in a pipe', async () => {
    const box = await rateLimited();
    const r = await runSgq(['graph', 'followers', 'jack_3', '--max-wait', '10s'], { env: envFor(box) });
    expect(r.code).toBe(0);
    expect(ndjson(r.stdout)).toHaveLength(3);
    expect(lines(r.stderr)).toEqual(['sgq: graph/get_followers: the service answered HTTP 429: Too Many Requests; waiting 3s for it, as --max-wait 10s allows']);
    expect(box.calls.get('graph/get_followers')).toBe(2);
  });

  it('counts the wait down on a terminal', async () => {
    const box = await rateLimited();
    const r = await runSgq(['graph', 'followers', 'jack_3', '--max-wait', '10s'], { env: envFor(box), stderrIsTTY: true, stderrColumns: 200 });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/waiting 3s for it, as --max-wait 10s allows: [1-3]s left/);
  });

  it('a Retry-After longer than --max-wait still fails, naming it', async () => {
    const box = await rateLimited();
    const r = await runSgq(['graph', 'followers', 'jack', '--max-wait', '2s'], { env: envFor(box) });
    expect(r.code).toBe(7);
    expect(r.stderr).toContain('it asks to wait 3s, longer than --max-wait allows; try again later, or raise --max-wait');
  });

  it('never waits for the subscription-expired 429', async () => {
    const box = await startSandbox({ ttlMs: 60_000 });
    open.push(box);
    const r = await runSgq(['graph', 'followers', 'jack', '--max-wait', '1h'], { env: envFor(box, EXPIRED_KEY) });
    expect(r.code).toBe(5);
    expect(box.calls.get('graph/get_followers')).toBe(1);
  });

  it('an invalid SGQ_RETRY_AFTER_CAP is a configuration error', async () => {
    const box = await rateLimited();
    const r = await runSgq(['graph', 'followers', 'jack'], { env: { ...envFor(box), SGQ_RETRY_AFTER_CAP: 'soon' } });
    expect(r.code).toBe(3);
    expect(box.calls.size).toBe(0);
  });
});
