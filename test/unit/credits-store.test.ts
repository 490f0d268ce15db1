import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { noteFile, readBalance, readObservedPrices, recordSeen } from '../../src/cli/run/credits-store.js';
import { tempDir } from '../helpers/run.js';

// The balance notes have no lock (a lock costs a one-page run more than the note is worth):
// runs of different profiles write different files, and a run merges again what another run
// of its profile wrote between its read and its rename. The other run is put in that window
// here: just as this one starts writing.

const race = vi.hoisted(() => ({ other: undefined as (() => void) | undefined }));
vi.mock('../../src/fs/atomic.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/fs/atomic.js')>();
  /** The other run writes once, when this one has read the file and begins to write its own. */
  const window = (target: string) => {
    const other = /[/\\]credits(\.[^/\\]+)?\.json$/.test(target) ? race.other : undefined;
    race.other = undefined;
    other?.();
  };
  return {
    ...real,
    replaceFile: (target: string, ...rest: Parameters<typeof real.replaceFile> extends [string, ...infer R] ? R : never) => (window(target), real.replaceFile(target, ...rest)),
    createTemp: (target: string, mode?: number) => (window(target), real.createTemp(target, mode)),
  };
});

const balance = (credits: number) => ({ credits, seen_at: '2026-11-25T03:00:00.000Z', route: 'graph/get_followers', base_url: 'http://127.0.0.1:1' });
const price = (credits: number) => ({ credits, seen_at: '2026-11-25T03:00:00.000Z', base_url: 'http://127.0.0.1:1' });
const credits = (file: string, profile: string) => readBalance(file, profile)?.credits;
const prices = (file: string, profile: string) => [...readObservedPrices(file, profile, undefined)].sort();

describe('credits.json: notes of runs at the same time', () => {
  it('a note another profile wrote between this run read its file and its rename is kept, with this one', () => {
    for (const [mine, theirs] of [
      ['default', 'work'],
      ['work', 'default'],
      ['work', 'home'],
    ] as const) {
      const file = join(tempDir(), 'credits.json');
      recordSeen(file, 'old', { balance: balance(1) });
      race.other = () => recordSeen(file, theirs, { balance: balance(2), prices: { 'graph/get_following': price(4) } });
      recordSeen(file, mine, { balance: balance(3), prices: { 'graph/get_followers': price(3) } });
      expect(race.other).toBeUndefined();
      expect([credits(file, 'old'), credits(file, theirs), credits(file, mine)]).toEqual([1, 2, 3]);
      expect(prices(file, theirs)).toEqual([['graph/get_following', 4]]);
      expect(prices(file, mine)).toEqual([['graph/get_followers', 3]]);
    }
  });

  it('the default profile keeps credits.json; another writes credits.PROFILE.json beside it, and reads credits.json until it has one', () => {
    const dir = tempDir();
    const file = join(dir, 'credits.json');
    // Notes of sgq before 3.4: every profile in credits.json.
    const before = { profiles: { default: balance(10), work: balance(20), 'a/b': balance(30) }, prices: { work: { 'graph/get_following': price(4) } } };
    writeFileSync(file, JSON.stringify(before));
    expect([credits(file, 'default'), credits(file, 'work'), credits(file, 'a/b'), credits(file, 'none')]).toEqual([10, 20, 30, undefined]);
    recordSeen(file, 'work', { balance: balance(21), prices: { 'graph/get_followers': price(3) } });
    recordSeen(file, 'a/b', { balance: balance(31) });
    recordSeen(file, 'default', { balance: balance(11) });
    expect(readdirSync(dir).sort()).toEqual(['credits.a%2Fb.json', 'credits.json', 'credits.work.json']);
    expect([credits(file, 'default'), credits(file, 'work'), credits(file, 'a/b')]).toEqual([11, 21, 31]);
    // The prices the profile had in credits.json go with it into its own file.
    expect(prices(file, 'work')).toEqual([['graph/get_followers', 3], ['graph/get_following', 4]]);
    expect(JSON.parse(readFileSync(join(dir, 'credits.work.json'), 'utf8'))).toEqual({ profiles: { work: balance(21) }, prices: { work: { 'graph/get_following': price(4), 'graph/get_followers': price(3) } } });
    // credits.json keeps what the default profile wrote, and what older runs left of the others.
    expect(Object.keys((JSON.parse(readFileSync(file, 'utf8')) as { profiles: object }).profiles)).toEqual(['default', 'work', 'a/b']);
    for (const name of readdirSync(dir)) expect(statSync(join(dir, name)).mode & 0o777).toBe(0o600);
  });

  it('the first notes of two profiles, written at once into a folder that does not exist yet, are both kept', () => {
    const file = join(tempDir(), 'sub', 'credits.json');
    race.other = () => recordSeen(file, 'work', { balance: balance(2) });
    recordSeen(file, 'default', { balance: balance(3) });
    expect([credits(file, 'default'), credits(file, 'work')]).toEqual([3, 2]);
  });

  it('the same profile written in the window: this run (the later rename) has the last word on its balance, both routes\' prices stay', () => {
    for (const profile of ['default', 'work']) {
      const file = join(tempDir(), 'credits.json');
      recordSeen(file, 'old', { balance: balance(1) });
      race.other = () => recordSeen(file, profile, { balance: balance(2), prices: { 'graph/get_following': price(4) } });
      recordSeen(file, profile, { balance: balance(3), prices: { 'graph/get_followers': price(3) } });
      expect(credits(file, profile)).toBe(3);
      expect(credits(file, 'old')).toBe(1);
      expect(prices(file, profile)).toEqual([['graph/get_followers', 3], ['graph/get_following', 4]]);
      // The same indented JSON as always, 0600, and no temporary file left.
      const own = noteFile(file, profile);
      expect(readFileSync(own, 'utf8')).toBe(`${JSON.stringify(JSON.parse(readFileSync(own, 'utf8')), null, 2)}\n`);
      expect(readdirSync(join(file, '..')).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    }
  });
});
