import { describe, expect, it } from 'vitest';
import { CallError, classify, parseRetryAfter } from '../../src/core/classify.js';
import { ExitCode } from '../../src/core/errors.js';

function failure(status: number, body: string, headers: Record<string, string> = {}): CallError {
  try {
    classify(status, headers, body);
  } catch (error) {
    return error as CallError;
  }
  throw new Error('expected a failure');
}

describe('classify', () => {
  it('passes a good envelope through', () => {
    expect(classify(200, {}, '{"data":[{"username":"a"}],"current_credits":5}')).toEqual({ data: [{ username: 'a' }], current_credits: 5 });
  });

  it('maps error records to exit 4 whatever the status, without retry', () => {
    for (const status of [200, 400, 404, 422, 500]) {
      const e = failure(status, '{"data":[{"error":"no data for username = x"}],"current_credits":3}');
      expect(e.exitCode).toBe(ExitCode.service);
      expect(e.retryable).toBe(false);
      expect(e.records).toEqual(['no data for username = x']);
    }
  });

  it('maps the subscription-expired 429 to exit 5 with endpoint and credits, never retried', () => {
    const e = failure(429, '{"Error":"Subscription expired and credit value exceeded","Endpoint":"/graph/get_followers","Current credits":0}');
    expect(e.exitCode).toBe(ExitCode.expired);
    expect(e.retryable).toBe(false);
    expect(e.message).toContain('Endpoint: /graph/get_followers');
    expect(e.message).toContain('Current credits: 0');
  });

  it('retries a plain 429 and honours Retry-After', () => {
    const e = failure(429, '{"message":"slow down"}', { 'retry-after': '2' });
    expect(e.retryable).toBe(true);
    expect(e.retryAfterMs).toBe(2000);
    expect(e.exitCode).toBe(ExitCode.network);
  });

  it('takes a 429 with a JSON Error string that is not the subscription body for a rate limit', () => {
    const e = failure(429, '{"Error":"Too many requests"}', { 'retry-after': '1' });
    expect(e.exitCode).toBe(ExitCode.network);
    expect(e.retryable).toBe(true);
    expect(e.retryAfterMs).toBe(1000);
  });

  it.each([401, 403])('maps %i to exit 3', (status) => {
    const e = failure(status, '{"message":"Invalid API key."}');
    expect(e.exitCode).toBe(ExitCode.config);
    expect(e.message).toContain('Invalid API key.');
    expect(e.retryable).toBe(false);
  });

  it.each([408, 500, 502, 503, 504])('retries %i', (status) => {
    expect(failure(status, '<html>bad gateway</html>').retryable).toBe(true);
  });

  it('shows the status and message of other 4xx as exit 4', () => {
    const e = failure(404, '{"detail":"Not Found"}');
    expect(e.exitCode).toBe(ExitCode.service);
    expect(e.message).toContain('HTTP 404: Not Found');
  });

  it('maps the placeholder message to exit 6', () => {
    const e = failure(200, '{"message":"not yet"}');
    expect(e.exitCode).toBe(ExitCode.unavailable);
    expect(e.message).toContain('not yet');
  });

  it.each([
    ['<html><body>oops</body></html>', 'HTML'],
    ['{"data":[', 'not valid JSON'],
    ['', 'empty'],
    ['[1,2]', 'not an object'],
  ])('rejects the 200 body %j as exit 7', (body, words) => {
    const e = failure(200, body);
    expect(e.exitCode).toBe(ExitCode.network);
    expect(e.message).toContain(words);
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('3', now)).toBe(3000);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:05 GMT', now)).toBe(5000);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    // A wait past the double range is still a number a message can show.
    expect(parseRetryAfter('9'.repeat(400), now)).toBe(Number.MAX_SAFE_INTEGER);
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});
