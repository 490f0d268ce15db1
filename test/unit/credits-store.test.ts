import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { creditsFolder, forgetPrices, readBalance, readObservedPrices, recordSeen } from '../../src/cli/run/credits-store.js';
import { SANDBOX_SERVICE, type StateOwner } from '../../src/core/service.js';
import { tempDir } from '../helpers/run.js';

// The balance notes have no lock (a lock costs a one-page run more than the note is worth):
// each service and profile writes a file of its own, and a run merges again what another run
// of the same owner wrote between its read and its rename. The other run is put in that
// window here: just as this one starts writing.

const race = vi.hoisted(() => ({ other: undefined as (() => void) | undefined }));
vi.mock('../../src/fs/atomic.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/fs/atomic.js')>();
  /** The other run writes once, when this one has read the file and begins to write its own. */
  const window = (target: string) => {
    const other = /[/\\]note\.json$/.test(target) ? race.other : undefined;
    race.other = undefined;
    other?.();
  };
  return {
    ...real,
    replaceFile: (target: string, ...rest: Parameters<typeof real.replaceFile> extends [string, ...infer R] ? R : never) => (window(target), real.replaceFile(target, ...rest)),
    createTemp: (target: string, mode?: number) => (window(target), real.createTemp(target, mode)),
  };
});

const A = 'https://a.example';
const B = 'https://b.example:8443/prefix';
const owner = (service: string, profile = 'default'): StateOwner => ({ service, profile });
const balance = (credits: number, baseUrl = A) => ({ credits, seen_at: '2026-11-25T03:00:00.000Z', route: 'graph/get_followers', base_url: baseUrl });
const price = (credits: number) => ({ credits, seen_at: '2026-11-25T03:00:00.000Z' });
const legacyPrice = (credits: number, baseUrl: string) => ({ ...price(credits), base_url: baseUrl });
const configIn = (dir: string) => join(dir, 'config.json');
const credits = (config: string, who: StateOwner) => readBalance(config, who)?.credits;
const prices = (config: string, who: StateOwner) => [...readObservedPrices(config, who)].sort();

describe('the note of each service and profile', () => {
  it('is a file of its own under credits/@SERVICE/PROFILE, 0600, made with its folders (0700)', () => {
    const dir = join(tempDir(), 'not', 'yet');
    const config = configIn(dir);
    const owners = [owner(A), owner(B), owner(A, 'work'), owner(SANDBOX_SERVICE), owner(A, 'a/b')];
    owners.forEach((who, i) => recordSeen(config, who, { balance: balance(i + 1), prices: { 'graph/get_followers': price(i + 1) } }));
    expect(owners.map((who) => credits(config, who))).toEqual([1, 2, 3, 4, 5]);
    expect(owners.map((who) => prices(config, who))).toEqual([1, 2, 3, 4, 5].map((n) => [['graph/get_followers', n]]));
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    for (const who of owners) {
      const folder = creditsFolder(config, who)!;
      expect(folder.startsWith(join(dir, 'credits', '@'))).toBe(true);
      expect(readdirSync(folder)).toEqual(['note.json']);
      expect(statSync(join(folder, 'note.json')).mode & 0o777).toBe(0o600);
    }
    expect(creditsFolder(undefined, owner(A))).toBeUndefined();
  });

  it('the same owner written in the window: this run (the later rename) has the last word on its balance, both routes\' prices stay', () => {
    const config = configIn(tempDir());
    const who = owner(A, 'work');
    recordSeen(config, owner(B, 'work'), { balance: balance(1, B) });
    race.other = () => recordSeen(config, who, { balance: balance(2), prices: { 'graph/get_following': price(4) } });
    recordSeen(config, who, { balance: balance(3), prices: { 'graph/get_followers': price(3) } });
    expect(race.other).toBeUndefined();
    expect([credits(config, who), credits(config, owner(B, 'work'))]).toEqual([3, 1]);
    expect(prices(config, who)).toEqual([['graph/get_followers', 3], ['graph/get_following', 4]]);
    const file = join(creditsFolder(config, who)!, 'note.json');
    expect(readFileSync(file, 'utf8')).toBe(`${JSON.stringify(JSON.parse(readFileSync(file, 'utf8')), null, 2)}\n`);
    expect(readdirSync(creditsFolder(config, who)!).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('--forget-prices: the owner\'s prices go, its balance and other owners\' prices stay', () => {
    const config = configIn(tempDir());
    recordSeen(config, owner(A), { balance: balance(7), prices: { 'graph/get_followers': price(4), 'metadata/get_tweets': price(2) } });
    recordSeen(config, owner(B), { prices: { 'graph/get_followers': price(5) } });
    expect([...forgetPrices(config, owner(A))]).toEqual([['graph/get_followers', 4], ['metadata/get_tweets', 2]]);
    expect(prices(config, owner(A))).toEqual([]);
    expect(credits(config, owner(A))).toBe(7);
    expect(prices(config, owner(B))).toEqual([['graph/get_followers', 5]]);
    expect(forgetPrices(config, owner(A)).size).toBe(0);
  });
});

describe('the notes of sgq 3.x', () => {
  it('are read as the note of the service their base_url names, and carried over by its first note', () => {
    const dir = tempDir();
    const config = configIn(dir);
    // Before 3.4 every profile was in credits.json; 3.4 wrote credits.PROFILE.json for the others.
    const shared = {
      profiles: { default: balance(10, `${A}/api/`), work: balance(20, B), old: balance(30, A) },
      prices: { default: { 'graph/get_followers': legacyPrice(4, A), 'metadata/get_tweets': legacyPrice(2, B) }, old: { 'graph/get_following': legacyPrice(5, A) } },
    };
    writeFileSync(join(dir, 'credits.json'), JSON.stringify(shared));
    writeFileSync(join(dir, 'credits.work.json'), JSON.stringify({ profiles: { work: balance(21, `${B}/`) }, prices: {} }));
    expect([credits(config, owner(A)), credits(config, owner(B))]).toEqual([10, undefined]);
    expect([prices(config, owner(A)), prices(config, owner(B))]).toEqual([[['graph/get_followers', 4]], [['metadata/get_tweets', 2]]]);
    // A profile with a file of its own (3.4) reads it; one without, credits.json.
    expect([credits(config, owner(B, 'work')), credits(config, owner(A, 'work'))]).toEqual([21, undefined]);
    expect([credits(config, owner(A, 'old')), prices(config, owner(A, 'old'))]).toEqual([30, [['graph/get_following', 5]]]);
    // The sandbox's notes were never kept: it takes none.
    expect([credits(config, owner(SANDBOX_SERVICE)), prices(config, owner(SANDBOX_SERVICE))]).toEqual([undefined, []]);

    recordSeen(config, owner(A), { balance: balance(11) });
    expect([credits(config, owner(A)), prices(config, owner(A))]).toEqual([11, [['graph/get_followers', 4]]]);
    // Once the owner has its own note, forgetting its prices does not bring back those of 3.x.
    forgetPrices(config, owner(A));
    expect(prices(config, owner(A))).toEqual([]);
    // The files of 3.x are left as they were, for the other services they name.
    expect(JSON.parse(readFileSync(join(dir, 'credits.json'), 'utf8'))).toEqual(shared);
    expect(prices(config, owner(B))).toEqual([['metadata/get_tweets', 2]]);
  });

  it('a damaged note or price reads as nothing known', () => {
    const dir = tempDir();
    const config = configIn(dir);
    writeFileSync(join(dir, 'credits.json'), JSON.stringify({ profiles: {}, prices: { default: { 'graph/get_followers': { credits: -4, base_url: A }, 'metadata/get_tweets': 'x' } } }));
    expect(prices(config, owner(A))).toEqual([]);
    recordSeen(config, owner(A), { balance: balance(3) });
    writeFileSync(join(creditsFolder(config, owner(A))!, 'note.json'), '{"balance": {"credits": 3');
    expect(credits(config, owner(A))).toBeUndefined();
    recordSeen(config, owner(A), { balance: balance(4) });
    expect(credits(config, owner(A))).toBe(4);
  });
});
