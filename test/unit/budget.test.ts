import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Budget } from '../../src/core/budget.js';
import { DEFAULT_RETRY, retryDelay } from '../../src/core/retry.js';
import { worstExitCode } from '../../src/core/errors.js';

describe('Budget', () => {
  const page = (records: number, full = false) => ({ records, full });

  it('grants exactly --limit records, never more, then stops', async () => {
    const b = new Budget({ limit: 7, knownCost: null });
    expect(await b.acquire()).toBe('go');
    expect(b.settleCall(true, null, page(5, true))).toBe(5);
    expect(await b.acquire()).toBe('go');
    expect(b.settleCall(true, null, page(5, true))).toBe(2);
    expect(await b.acquire()).toBe('limit');
  });

  it('stops before a known price would pass --max-credits', async () => {
    const b = new Budget({ maxCredits: 13, knownCost: 6 });
    expect(await b.acquire()).toBe('go');
    b.settleCall(true, 94);
    expect(await b.acquire()).toBe('go');
    b.settleCall(true, 88);
    expect(await b.acquire()).toBe('max-credits');
    expect(b.creditsUsed).toBe(12);
    expect(b.creditsLeft).toBe(88);
    expect(b.maxCreditsLeft).toBe(1);
  });

  it('learns an unknown price from the balances', async () => {
    const b = new Budget({ maxCredits: 25, knownCost: null });
    await b.acquire();
    b.settleCall(true, 990);
    expect(b.estimatedCost()).toBe(1);
    await b.acquire();
    b.settleCall(true, 980);
    expect(b.estimatedCost()).toBe(10);
    expect(b.creditsUsed).toBe(20);
    expect(await b.acquire()).toBe('max-credits');
  });

  it('makes a call that would not fit beside the calls in flight wait for them', async () => {
    const b = new Budget({ maxCredits: 6, knownCost: 6 });
    expect(await b.acquire()).toBe('go');
    const second = b.acquire();
    let settled = false;
    void second.then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    b.settleCall(true, 94);
    expect(await second).toBe('max-credits');
  });

  it('lets a waiting call go when the call in flight was not billed', async () => {
    const b = new Budget({ maxCredits: 6, knownCost: 6 });
    await b.acquire();
    const second = b.acquire();
    b.settleCall(false, null);
    expect(await second).toBe('go');
  });

  it('ends a wait when the run is aborted', async () => {
    const b = new Budget({ limit: 10, knownCost: 1 });
    const controller = new AbortController();
    await b.acquire();
    const second = b.acquire(controller.signal);
    controller.abort();
    await expect(second).rejects.toThrow();
  });

  it('does not charge unbilled calls', async () => {
    const b = new Budget({ knownCost: 6 });
    await b.acquire();
    b.settleCall(false, null);
    expect(b.creditsUsed).toBe(0);
  });

  /**
   * Workers share one budget as the runner's do: each asks for a call, its answer arrives in
   * a random order, bringing up to a page of records. Whatever the order and the sizes,
   * --limit and --max-credits hold for the whole run.
   */
  it('over any concurrency and any order of answers, cuts at most one call and never passes a limit', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          limit: fc.option(fc.integer({ min: 1, max: 60 }), { nil: undefined }),
          maxCredits: fc.option(fc.integer({ min: 0, max: 40 }), { nil: undefined }),
          cost: fc.option(fc.integer({ min: 0, max: 7 }), { nil: null }),
          trueCost: fc.integer({ min: 1, max: 7 }),
          pageSize: fc.integer({ min: 1, max: 12 }),
          workers: fc.integer({ min: 1, max: 8 }),
          calls: fc.integer({ min: 1, max: 40 }),
        }),
        fc.infiniteStream(fc.tuple(fc.nat(), fc.boolean(), fc.nat())),
        async (o, choices) => {
          const price = o.cost ?? o.trueCost;
          const b = new Budget({ limit: o.limit, maxCredits: o.maxCredits, knownCost: o.cost });
          const pending: (() => void)[] = [];
          let sent = 0;
          let cut = 0;
          let written = 0;
          let balance = 10_000;
          let stoppedAt: number | undefined;
          const choice = choices[Symbol.iterator]();
          const worker = async () => {
            for (;;) {
              const grant = await b.acquire();
              if (grant !== 'go') return;
              if (stoppedAt !== undefined) throw new Error('a call was sent after the budget was met');
              sent++;
              await new Promise<void>((resolve) => pending.push(resolve));
              const [, full, size] = choice.next().value as [number, boolean, number];
              const records = full ? o.pageSize : size % (o.pageSize + 1);
              balance -= price;
              const granted = b.settleCall(true, balance, { records, full });
              written += granted;
              if (granted < records) cut++;
              if (b.recordsLeft <= 0) stoppedAt ??= sent;
              if (sent >= o.calls) return;
            }
          };
          const running = Promise.all(Array.from({ length: o.workers }, worker));
          // Answer the calls in flight in a random order until every worker is done.
          let done = false;
          void running.finally(() => (done = true)).catch(() => undefined);
          while (!done) {
            await new Promise((r) => setImmediate(r));
            if (pending.length) pending.splice((choice.next().value as [number])[0] % pending.length, 1)[0]!();
          }
          await running;
          expect(cut).toBeLessThanOrEqual(1);
          if (o.limit !== undefined) expect(written).toBeLessThanOrEqual(o.limit);
          if (o.maxCredits !== undefined && o.cost !== null) expect(sent * price).toBeLessThanOrEqual(o.maxCredits);
        },
      ),
      { numRuns: 300 },
    );
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
