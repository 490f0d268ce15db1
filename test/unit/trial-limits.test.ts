import { describe, expect, it } from 'vitest';
import { CallError, classify } from '../../src/core/classify.js';
import { ExitCode, SgqError, worstExitCode } from '../../src/core/errors.js';
import { PUBLISHED_RATE_LIMITS, parseRateLimits, rateLimitOf, requestsAnHour, trialHourMs } from '../../src/core/rate-limits.js';
import { forgetsTrial, paceMs, slotFor, type RoutePace } from '../../src/core/pace.js';

// The trial limits of service-facts.md ("Rate limits"): a 429 whose body says
// {"Error": "API rate limit exceeded", "Endpoint": …, "Max Requests Per Hour": n}, and no Retry-After.

const TRIAL_BODY = '{"Error":"API rate limit exceeded","Endpoint":"/graph/get_followers","Max Requests Per Hour":10}';

function failure(status: number, text: string, headers: Record<string, string> = {}): CallError {
  try {
    classify(status, headers, text, { path: '/api/graph/get_followers' });
  } catch (error) {
    if (error instanceof CallError) return error;
    throw error;
  }
  throw new Error('classify did not throw');
}

describe('the trial 429', () => {
  it('is an hourly request limit (exit 9, kind quota), never a quick retry, with the limit it states', () => {
    const e = failure(429, TRIAL_BODY);
    expect(e.exitCode).toBe(9);
    expect(e.kind).toBe('quota');
    expect(e.retryable).toBe(false);
    expect(e.retryAfterMs).toBeUndefined();
    expect(e.details).toMatchObject({ status: 429, limit: 10, route: 'graph/get_followers' });
    expect(e.message).toContain('10 requests an hour');
  });

  it('keeps a Retry-After if the service ever sends one', () => {
    expect(failure(429, TRIAL_BODY, { 'retry-after': '120' }).retryAfterMs).toBe(120_000);
  });

  it('leaves the subscription-expired 429 and other 429s as they were', () => {
    expect(failure(429, '{"Error":"Subscription expired and credit value exceeded","Endpoint":"/graph/get_followers","Current credits":0}').exitCode).toBe(5);
    const plain = failure(429, '{"Error":"Too many requests"}', { 'retry-after': '1' });
    expect(plain.exitCode).toBe(7);
    expect(plain.retryable).toBe(true);
  });

  it('exit 9 is in the contract, between 5 and 7 in precedence: 7 over 9 over 5 over 4', () => {
    expect(ExitCode.quota).toBe(9);
    expect(new SgqError(9, 'x').kind).toBe('quota');
    expect(worstExitCode([4, 9])).toBe(9);
    expect(worstExitCode([5, 9])).toBe(9);
    expect(worstExitCode([9, 7])).toBe(7);
    expect(worstExitCode([4, 5, 9, 7])).toBe(7);
    expect(worstExitCode([9, 3])).toBe(3);
  });
});

describe('rate-limits', () => {
  it('publishes the limits of service-facts.md', () => {
    expect(PUBLISHED_RATE_LIMITS).toMatchObject({
      'graph/get_followers': 10,
      'graph/get_following': 10,
      'metadata/get_follower_count': 15,
      'metadata/get_latest_metadata': 10,
      'metadata/get_latest_tweets': 10,
      'metadata/get_past_usernames': 10,
      'alpha/get_classification': 10,
      'metadata/get_metadata_history': 20,
      'alpha/get_score_history': 20,
    });
  });

  it('parses route=n pairs as prices are parsed, and names a bad pair', () => {
    expect([...parseRateLimits('graph/get_followers=3, /api/metadata/get_metadata_history=40')]).toEqual([
      ['graph/get_followers', 3],
      ['metadata/get_metadata_history', 40],
    ]);
    expect(() => parseRateLimits('graph/get_followers=0')).toThrow(/invalid rate-limits pair "graph\/get_followers=0"/);
    expect(() => parseRateLimits('graph/nothing=3')).toThrow(/no route graph\/nothing/);
    expect(() => parseRateLimits('graph/get_followers')).toThrow(/route=requests/);
    expect(() => parseRateLimits('graph/get_followers=1,graph/get_followers=2')).toThrow(/twice/);
  });

  it('takes the setting over the limit the service stated over the published one', () => {
    expect(rateLimitOf('graph/get_followers', {})).toEqual({ perHour: 10, source: 'published' });
    expect(rateLimitOf('graph/get_followers', { stated: 12 })).toEqual({ perHour: 12, source: 'stated' });
    expect(rateLimitOf('graph/get_followers', { setting: 'graph/get_followers=5', stated: 12 })).toEqual({ perHour: 5, source: 'setting' });
    expect(rateLimitOf('metadata/get_tweets', {})).toBeNull();
    expect(requestsAnHour(1)).toBe('1 request an hour');
    expect(requestsAnHour(20)).toBe('20 requests an hour');
  });

  it('an hour lasts an hour, unless a test shortens it', () => {
    expect(trialHourMs({})).toBe(3_600_000);
    expect(trialHourMs({ SGQ_TRIAL_HOUR_MS: '1500' })).toBe(1500);
    expect(() => trialHourMs({ SGQ_TRIAL_HOUR_MS: 'soon' })).toThrow(/SGQ_TRIAL_HOUR_MS/);
  });
});

describe('the pace of a route (a sliding hour of calls)', () => {
  const W = 1000;
  const done = (...times: number[]): RoutePace => ({ calls: times.map((t) => ({ at: t, done: t, lapse: t + 500 })) });

  it('lets a call go at once while fewer calls than the limit are in the last hour', () => {
    expect(slotFor(undefined, 3, W, 10_000)).toBe(10_000);
    expect(slotFor(done(9_500, 9_600), 3, W, 10_000)).toBe(10_000);
  });

  it('a call over the limit waits until the oldest call of the hour is an hour old', () => {
    expect(slotFor(done(9_100, 9_500, 9_600), 3, W, 10_000)).toBe(10_100);
    expect(slotFor(done(8_000, 9_100, 9_500, 9_600), 3, W, 10_000)).toBe(10_100);
  });

  it('counts a call still in flight as inside the hour: its hour starts no sooner than now', () => {
    const route: RoutePace = { calls: [{ at: 9_900, lapse: 12_000 }] };
    expect(slotFor(route, 1, W, 10_000)).toBe(11_000);
    expect(slotFor(route, 1, W, 11_500)).toBe(12_500);
    // A call in flight past its lapse (its process died) counts as answered then.
    expect(slotFor(route, 1, W, 12_600)).toBe(13_000);
    expect(slotFor(route, 1, W, 13_000)).toBe(13_000);
  });

  it('waits out a refusal', () => {
    expect(slotFor({ calls: [], refusedAt: 9_000, refusedUntil: 10_000 }, 3, W, 9_500)).toBe(10_000);
  });

  it('says how long a number of calls takes at that pace', () => {
    expect(paceMs(3, 3, W, undefined, 0)).toBe(0);
    expect(paceMs(4, 3, W, undefined, 0)).toBe(W);
    expect(paceMs(15, 10, 3_600_000, undefined, 0)).toBe(3_600_000);
    expect(paceMs(2, 3, W, done(9_500, 9_600), 10_000)).toBe(500);
    expect(paceMs(1, 3, W, { calls: [], refusedAt: 0, refusedUntil: 10_500 }, 10_000)).toBe(500);
  });

  it('forgets a learned trial once an hour held more calls than the limit and no refusal', () => {
    const learned = { at: 0 };
    const busy = done(5_000, 5_100, 5_200, 5_300);
    expect(forgetsTrial(learned, busy, 3, W, 5_400)).toBe(true);
    expect(forgetsTrial(learned, done(5_000, 5_100, 5_200), 3, W, 5_400)).toBe(false);
    expect(forgetsTrial({ at: 4_900 }, busy, 3, W, 5_400)).toBe(false);
    expect(forgetsTrial(learned, { ...busy, refusedAt: 4_500, refusedUntil: 5_500 }, 3, W, 5_400)).toBe(false);
  });
});
