import { describe, expect, it } from 'vitest';
import { Budget } from '../../src/run/budget.js';
import { DEFAULT_RETRY, retryDelay } from '../../src/api/retry.js';
import { worstExitCode } from '../../src/errors.js';

describe('Budget', () => {
  it('grants exactly --limit records, never more', () => {
    const b = new Budget({ limit: 7, knownCost: null });
    expect(b.takeRecords(5)).toBe(5);
    expect(b.takeRecords(5)).toBe(2);
    expect(b.takeRecords(5)).toBe(0);
    expect(b.reserveCall()).toBe(false);
  });

  it('stops before a known price would pass --max-credits', () => {
    const b = new Budget({ maxCredits: 13, knownCost: 6 });
    expect(b.reserveCall()).toBe(true);
    b.settleCall(true, 94);
    expect(b.reserveCall()).toBe(true);
    b.settleCall(true, 88);
    expect(b.reserveCall()).toBe(false);
    expect(b.creditsUsed).toBe(12);
    expect(b.creditsLeft).toBe(88);
  });

  it('learns an unknown price from the balances', () => {
    const b = new Budget({ maxCredits: 25, knownCost: null });
    b.reserveCall();
    b.settleCall(true, 990);
    expect(b.estimatedCost()).toBe(1);
    b.reserveCall();
    b.settleCall(true, 980);
    expect(b.estimatedCost()).toBe(10);
    expect(b.creditsUsed).toBe(20);
    expect(b.reserveCall()).toBe(false);
  });

  it('counts calls in flight against the budget', () => {
    const b = new Budget({ maxCredits: 2, knownCost: 1 });
    expect(b.reserveCall()).toBe(true);
    expect(b.reserveCall()).toBe(true);
    expect(b.reserveCall()).toBe(false);
  });

  it('does not charge unbilled calls', () => {
    const b = new Budget({ knownCost: 6 });
    b.reserveCall();
    b.settleCall(false, null);
    expect(b.creditsUsed).toBe(0);
  });
});

describe('retry policy', () => {
  it('backs off exponentially with jitter and stops after the retries', () => {
    const policy = { ...DEFAULT_RETRY, retries: 3, baseDelayMs: 100 };
    expect(retryDelay(policy, 1, undefined, () => 0)).toBe(50);
    expect(retryDelay(policy, 1, undefined, () => 1)).toBe(100);
    expect(retryDelay(policy, 3, undefined, () => 1)).toBe(400);
    expect(retryDelay(policy, 4, undefined, () => 1)).toBeUndefined();
  });

  it('honours Retry-After within the cap and gives up beyond it', () => {
    expect(retryDelay(DEFAULT_RETRY, 1, 2000)).toBe(2000);
    expect(retryDelay(DEFAULT_RETRY, 1, DEFAULT_RETRY.maxRetryAfterMs + 1)).toBeUndefined();
  });
});

describe('worstExitCode', () => {
  it('ranks network over expired over error records', () => {
    expect(worstExitCode([4, 5, 7])).toBe(7);
    expect(worstExitCode([4, 5])).toBe(5);
    expect(worstExitCode([0, 4])).toBe(4);
    expect(worstExitCode([])).toBe(0);
  });
});
