import { beforeAll, describe, expect, it } from 'vitest';
import { clock, fitLine, fractionDone, progressParts, type RunCounts } from '../../src/cli/stderr/progress.js';
import { displayWidth, loadTextWidth } from '../../src/cli/terminal/text-width.js';

beforeAll(loadTextWidth);
const counts = (over: Partial<RunCounts> = {}): RunCounts => ({ pages: 4, records: 2000, usersDone: 0, credits: 12, creditsLeft: 988, user: 'jack', elapsedMs: 4000, ...over });

describe('fractionDone', () => {
  it('is undefined without a bound', () => expect(fractionDone({}, counts())).toBeUndefined());
  it('follows --limit, --max-credits and users done, whichever is furthest', () => {
    expect(fractionDone({ limit: 8000 }, counts())).toBe(0.25);
    expect(fractionDone({ maxCredits: 24 }, counts())).toBe(0.5);
    expect(fractionDone({ limit: 8000, maxCredits: 24 }, counts())).toBe(0.5);
    expect(fractionDone({ users: 4 }, counts({ usersDone: 3 }))).toBe(0.75);
    expect(fractionDone({ limit: 1000 }, counts())).toBe(1);
  });
  it('draws no bar for one user without another bound (it would sit at 0% until the end)', () => {
    expect(fractionDone({ users: 1 }, counts())).toBeUndefined();
  });

  it('counts --max-pages only against the users given', () => {
    expect(fractionDone({ maxPages: 8 }, counts())).toBeUndefined();
    expect(fractionDone({ maxPages: 8, users: 1 }, counts())).toBe(0.5);
    expect(fractionDone({ maxPages: 8, users: 2 }, counts())).toBe(0.25);
  });
});

describe('the progress line', () => {
  it('says the records, the credits spent and left, the bar, the time left, pages, rate and elapsed time', () => {
    expect(progressParts('graph followers', { limit: 8000 }, counts())).toEqual([
      '2,000 records', '12 credits spent, 988 left', '[███░░░░░░░░░] 25%', '0:12 left', 'graph followers jack', '4 pages', '500 records/s', '0:04',
    ]);
  });
  it('leaves out what is not known: the balance, a bar without a bound, a rate before the first second', () => {
    expect(progressParts('info', {}, counts({ user: null, creditsLeft: null, elapsedMs: 500, pages: 1, records: 1, credits: 1 }))).toEqual(['1 record', '1 credit spent', 'info', '1 page', '0:01']);
  });
  it('fits the width with whole parts, the first one cut with … when nothing else fits', () => {
    const parts = progressParts('graph followers', { limit: 8000 }, counts({ user: '山田太郎' }));
    for (const width of [0, 5, 20, 40, 77, 120, 200]) {
      const line = fitLine(parts, width);
      expect(displayWidth(line)).toBeLessThanOrEqual(width);
    }
    expect(fitLine(parts, 42)).toBe('2,000 records · 12 credits spent, 988 left');
    expect(fitLine(parts, 41)).toBe('2,000 records');
    expect(fitLine(parts, 5)).toBe('2,00…');
    expect(fitLine(parts, 200)).toContain('graph followers 山田太郎');
  });
  it('clocks minutes and hours', () => {
    expect([clock(0), clock(75_000), clock(7_200_000)]).toEqual(['0:00', '1:15', '2:00:00']);
  });
});

describe('a user name the service controls', () => {
  it('is escaped before the line is measured, so the line still fits', () => {
    const part = progressParts('graph followers', {}, counts({ user: 'evil\u001b]0;title\u0007\u202e' })).find((p) => p.startsWith('graph followers'));
    expect(part).toBe('graph followers evil\\u{1b}]0;title\\u{7}\\u{202e}');
  });
});
