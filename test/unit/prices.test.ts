import { describe, expect, it } from 'vitest';
import { Budget } from '../../src/core/budget.js';
import { PriceMeter, type PriceEvent } from '../../src/core/price-meter.js';
import { parsePrices, priceOf } from '../../src/core/prices.js';
import { ROUTES } from '../../src/core/routes.js';
import { SgqError } from '../../src/core/errors.js';

describe('the public credit table', () => {
  it('holds the published figures, and marks the one sgq assumes', () => {
    const table = Object.fromEntries(ROUTES.map((r) => [r.path, [r.cost, r.costAssumed]]));
    expect(table).toEqual({
      'graph/get_followers': [3, false],
      'graph/get_following': [3, false],
      'alpha/get_score_history': [1, true],
      'metadata/get_metadata_history': [2, false],
      'metadata/get_tweets': [1, false],
      'metadata/get_latest_tweets': [6, false],
      'metadata/get_userid': [0, false],
      'lists/get_list_members': [1, false],
      'lists/get_latest_list_tweets': [1, false],
      info: [0, false],
    });
  });
});

describe('parsePrices', () => {
  it('reads route=credits pairs, with the spellings a route path takes', () => {
    expect([...parsePrices(' graph/get_followers=5, /api/metadata/get_tweets=2 ,,/info=0').entries()]).toEqual([
      ['graph/get_followers', 5],
      ['metadata/get_tweets', 2],
      ['info', 0],
    ]);
    expect(parsePrices('').size).toBe(0);
  });

  it.each([
    ['graph/get_followers=5,graph/get_follower=4', 'graph/get_follower=4', 'no route graph/get_follower'],
    ['graph/get_followers', 'graph/get_followers', 'it is not route=credits'],
    ['=3', '=3', 'it is not route=credits'],
    ['metadata/get_tweets=1.5', 'metadata/get_tweets=1.5', 'whole number of credits'],
    ['metadata/get_tweets=-1', 'metadata/get_tweets=-1', 'whole number of credits'],
    ['metadata/get_tweets=', 'metadata/get_tweets=', 'whole number of credits'],
    ['metadata/get_tweets=99999999', 'metadata/get_tweets=99999999', 'from 0 to 1,000,000'],
    ['info=0,/info=1', '/info=1', 'info is priced twice'],
  ])('%s is refused in one line that names the bad pair', (text, pair, why) => {
    let error: unknown;
    try {
      parsePrices(text);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SgqError);
    const { message, exitCode } = error as SgqError;
    expect(exitCode).toBe(2);
    expect(message).toContain(`invalid prices pair ${JSON.stringify(pair)}`);
    expect(message).toContain(why);
    expect(message).not.toContain('\n');
  });
});

describe('priceOf: setting > observed > public table', () => {
  it('takes each source in turn', () => {
    const setting = 'graph/get_followers=5';
    expect(priceOf('graph/get_followers', { setting, observed: 4 })).toEqual({ credits: 5, source: 'setting' });
    expect(priceOf('graph/get_following', { setting, observed: 4 })).toEqual({ credits: 4, source: 'observed' });
    expect(priceOf('graph/get_following', { setting })).toEqual({ credits: 3, source: 'public' });
    expect(priceOf('alpha/get_score_history', {})).toEqual({ credits: 1, source: 'assumed' });
    expect(priceOf('other/route', {})).toBeNull();
    expect(priceOf('other/route', { observed: 7 })).toEqual({ credits: 7, source: 'observed' });
  });
});

/** Drives a meter through calls one at a time: each `[balance, records]` is one answer. */
function serial(meter: PriceMeter, answers: [number | null, number][]): (number | undefined)[] {
  return answers.map(([balance, records]) => {
    meter.started(1);
    return meter.settled(1, { charged: true, balance, records });
  });
}

describe('PriceMeter', () => {
  it('measures calls one at a time after a balance, and takes a price once two calls in a row agree', () => {
    const events: PriceEvent[] = [];
    const meter = new PriceMeter((e) => events.push(e));
    expect(serial(meter, [[100, 5], [96, 5]])).toEqual([undefined, 4]);
    expect(meter.observed).toBeNull();
    expect(meter.pending).toBe(4);
    expect(serial(meter, [[92, 5]])).toEqual([4]);
    expect(meter.observed).toBe(4);
    expect(events).toEqual([{ kind: 'observed', credits: 4, before: 96, after: 92 }]);
    expect([meter.measuredCredits, meter.measuredCalls]).toEqual([8, 2]);
  });

  it('does not take a price from calls side by side, nor from an empty page', () => {
    const meter = new PriceMeter();
    serial(meter, [[100, 5]]);
    meter.started(1);
    meter.started(2);
    expect(meter.settled(2, { charged: true, balance: 97, records: 5 })).toBeUndefined();
    expect(meter.settled(1, { charged: true, balance: 94, records: 5 })).toBeUndefined();
    // The next call alone is measured again, from the last balance.
    expect(serial(meter, [[91, 0], [88, 5], [85, 5]])).toEqual([3, 3, 3]);
    expect(meter.observed).toBe(3);
  });

  it('a balance that goes up is reported and measures nothing; a missing balance breaks the chain', () => {
    const events: PriceEvent[] = [];
    const meter = new PriceMeter((e) => events.push(e));
    expect(serial(meter, [[100, 5], [150, 5], [147, 5], [null, 5], [144, 5], [141, 5]])).toEqual([undefined, undefined, 3, undefined, undefined, 3]);
    expect(events[0]).toEqual({ kind: 'rose', before: 100, after: 150 });
    expect(meter.measuredCredits).toBe(6);
    // Two measurements that agree make a price, even with a call between them that could not be measured.
    expect(meter.observed).toBe(3);
    expect(events.filter((e) => e.kind === 'observed')).toHaveLength(1);
  });
});

describe('PriceMeter with other processes spending (a SpendWatch)', () => {
  it('takes no price from a drop another process may have shared, and measures again once nobody else called', () => {
    const events: PriceEvent[] = [];
    let quiet = false;
    const since: unknown[] = [];
    const meter = new PriceMeter((e) => events.push(e), { quietSince: (mark) => (since.push(mark), quiet) });
    let n = 0;
    const answer = (balance: number) => {
      meter.started(1, ++n);
      return meter.settled(1, { charged: true, balance, records: 5 });
    };
    // Two drops of 9 while others spend: nothing measured, nothing observed.
    expect([answer(100), answer(91), answer(82)]).toEqual([undefined, undefined, undefined]);
    expect(meter.observed).toBeNull();
    expect(events).toEqual([{ kind: 'crowded' }, { kind: 'crowded' }]);
    // Each interval runs from the start of the call that reported the balance before.
    expect(since).toEqual([1, 2]);
    quiet = true;
    expect([answer(79), answer(76)]).toEqual([3, 3]);
    expect(meter.observed).toBe(3);
  });
});

describe('Budget with prices', () => {
  /** One call through the budget, alone. */
  const call = async (b: Budget, balance: number | null, records = 5) => {
    expect(await b.acquire()).toBe('go');
    b.settleCall(true, balance, { records, full: true });
  };

  it('--max-credits 5 at 3 credits a call sends one call, never a second', async () => {
    const b = new Budget({ maxCredits: 5, knownCost: 3 });
    await call(b, 97);
    expect(b.tryAcquire()).toBe('max-credits');
    expect(b.creditsUsed).toBe(3);
  });

  it('counts what the balances measured, and the price for calls they cannot show', async () => {
    const b = new Budget({ knownCost: 3 });
    await call(b, 100);
    await call(b, 98);
    await call(b, 96);
    // The first call at the price observed in the run (2), the others as measured.
    expect(b.creditsUsed).toBe(6);
    expect(b.estimatedCost()).toBe(2);
    expect(b.creditsLeft).toBe(96);
  });

  it('a drop above the table is budgeted at once, before it is confirmed', async () => {
    const b = new Budget({ maxCredits: 12, knownCost: 3 });
    await call(b, 100);
    await call(b, 95);
    expect(b.estimatedCost()).toBe(5);
    // 5 measured + 5 for the first call: a third call would make 15.
    expect(b.tryAcquire()).toBe('max-credits');
  });

  it('runs calls side by side under --max-credits only once the price is confirmed, or trusted', async () => {
    const untrusted = new Budget({ maxCredits: 100, knownCost: 3 });
    expect(untrusted.tryAcquire()).toBe('go');
    expect(untrusted.tryAcquire()).toBe('wait');
    const trusted = new Budget({ maxCredits: 100, knownCost: 3, trusted: true });
    expect(trusted.tryAcquire()).toBe('go');
    expect(trusted.tryAcquire()).toBe('go');
    const learning = new Budget({ maxCredits: 100, knownCost: 3 });
    for (const balance of [100, 97, 94]) await call(learning, balance);
    expect(learning.tryAcquire()).toBe('go');
    expect(learning.tryAcquire()).toBe('go');
  });

  it('with the balance read before the first call, --max-credits 5 at a real 1 (the table says 3) makes five calls', async () => {
    const b = new Budget({ maxCredits: 5, knownCost: 3 });
    expect(b.wantsOpeningBalance).toBe(true);
    await b.openWith(async () => 1000);
    expect(b.wantsOpeningBalance).toBe(false);
    let balance = 1000;
    let calls = 0;
    while (b.tryAcquire() === 'go') {
      b.settleCall(true, --balance, { records: 5, full: true });
      calls++;
    }
    expect(calls).toBe(5);
    expect(b.creditsUsed).toBe(5);
    expect(b.tryAcquire()).toBe('max-credits');
  });

  it('no opening balance for a free route, without --max-credits, or when no call fits; a failed read leaves it unknown', async () => {
    expect(new Budget({ maxCredits: 5, knownCost: 0 }).wantsOpeningBalance).toBe(false);
    expect(new Budget({ knownCost: 3 }).wantsOpeningBalance).toBe(false);
    expect(new Budget({ maxCredits: 2, knownCost: 3 }).wantsOpeningBalance).toBe(false);
    const b = new Budget({ maxCredits: 5, knownCost: 3 });
    await expect(b.openWith(() => Promise.reject(new Error('network')))).rejects.toThrow('network');
    await b.openWith(async () => undefined);
    await call(b, 99);
    expect(b.creditsUsed).toBe(3);
  });

  it('a balance that goes up never makes the spend negative', async () => {
    const b = new Budget({ knownCost: 3 });
    await call(b, 100);
    await call(b, 500);
    await call(b, 497);
    expect(b.creditsUsed).toBe(9);
    expect(b.creditsLeft).toBe(497);
  });
});
