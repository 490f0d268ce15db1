// --confirm-lost N (src/core/snapshots/confirm-lost.ts): the one rule of when a loss counts, and
// the merge of a snapshot with the N before it that applies it.
import { describe, expect, it } from 'vitest';
import { confirmationWindow, confirmedChange, diffWindow } from '../../src/core/snapshots/confirm-lost.js';
import type { Keyed } from '../../src/core/records/keyed.js';
import type { Change } from '../../src/core/diff/merge-diff.js';
import { keyReader } from '../../src/core/records/record-key.js';
import type { SnapshotMeta } from '../../src/core/snapshots/store.js';

/** A snapshot of accounts `id:name`, in key order, as a stream of one batch. */
async function* snapshot(accounts: string[]): AsyncGenerator<Keyed[]> {
  const sorted = accounts.map((a) => a.split(':') as [string, string]).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  yield sorted.map(([id, name]) => ({ key: id, line: JSON.stringify({ userid: id, username: name }) }));
}

const names = { older: keyReader('username'), newer: keyReader('username') };

/** The changes of the last night against the ones before it, under N. */
async function changesOf(nights: string[][], confirmLost: number) {
  const earlier = nights.slice(-1 - confirmLost, -1).map((accounts, i) => ({ records: snapshot(accounts), takenAt: `night ${nights.length - 1 - confirmLost + i}` }));
  const changes: Change[] = [];
  const counts = await diffWindow(earlier, snapshot(nights.at(-1)!), { confirmLost, names }, async (batch) => void changes.push(...batch));
  const who = (c: Change) => `${c.change} ${(JSON.parse(c.line) as { username: string }).username}${c.from ? ` from ${c.from}` : ''}${c.lastSeen ? ` (last seen ${c.lastSeen})` : ''}`;
  return { changes: changes.map(who), counts };
}

describe('confirmedChange: in which snapshot a change counts', () => {
  it('N = 1 is the plain diff of the last two snapshots', () => {
    expect(confirmedChange([true, false], 1)).toBe('lost');
    expect(confirmedChange([false, true], 1)).toBe('gained');
    expect(confirmedChange([true, true], 1)).toBeUndefined();
    expect(confirmedChange([false, false, true], 1)).toBe('gained');
  });

  it('N = 2: a loss counts in the second snapshot missing it, a flicker never, a return after a confirmed loss is a gain', () => {
    // present in night 0, missing in 1: not yet; missing in 2 too: lost at 2, once.
    expect(confirmedChange([true, false], 2)).toBeUndefined();
    expect(confirmedChange([true, false, false], 2)).toBe('lost');
    expect(confirmedChange([true, false, false, false], 2)).toBeUndefined();
    // gone one night, back the next: neither lost nor gained.
    expect(confirmedChange([true, false, true], 2)).toBeUndefined();
    // back after the loss was confirmed: a gain.
    expect(confirmedChange([true, false, false, true], 2)).toBe('gained');
    // a first sighting is a gain; history shorter than the window counts as absent before it.
    expect(confirmedChange([true], 2)).toBe('gained');
    expect(confirmedChange([false, true], 3)).toBe('gained');
  });

  it('the window of a snapshot: the last N complete snapshots before it, readable ones only', () => {
    const meta = (file: string, extra: Partial<SnapshotMeta> = {}) => ({ meta: { file, complete: true, identity: 'id', records: 3, ...extra } as SnapshotMeta });
    const history = [meta('a'), meta('b'), meta('c', { complete: false }), meta('d'), meta('e', { identity: undefined, records: 0 })];
    expect(confirmationWindow(history, 2).map((s) => s.meta.file)).toEqual(['b', 'd']);
    expect(confirmationWindow(history, 1).map((s) => s.meta.file)).toEqual(['d']);
  });
});

describe('diffWindow: a snapshot against the N before it', () => {
  it('a flicker (gone one night, back the next) is never reported with N = 2; with N = 1 it is a loss, then a gain', async () => {
    const nights = [['1:amy', '2:bob', '3:cat'], ['1:amy', '3:cat'], ['1:amy', '2:bob', '3:cat']];
    expect((await changesOf(nights.slice(0, 2), 2)).changes).toEqual([]);
    expect((await changesOf(nights.slice(0, 2), 2)).counts).toMatchObject({ lost: 0, missing: 1, unchanged: 2 });
    expect((await changesOf(nights, 2)).changes).toEqual([]);
    expect((await changesOf(nights.slice(0, 2), 1)).changes).toEqual(['lost bob (last seen night 0)']);
    expect((await changesOf(nights, 1)).changes).toEqual(['gained bob']);
  });

  it('a confirmed loss is reported once, in the snapshot that confirms it, with when it was last seen; its return is a gain', async () => {
    const nights = [['1:amy', '2:bob'], ['1:amy'], ['1:amy'], ['1:amy'], ['1:amy', '2:bob']];
    expect((await changesOf(nights.slice(0, 2), 2)).changes).toEqual([]);
    expect((await changesOf(nights.slice(0, 3), 2)).changes).toEqual(['lost bob (last seen night 0)']);
    expect((await changesOf(nights.slice(0, 4), 2)).changes).toEqual([]);
    expect((await changesOf(nights, 2)).changes).toEqual(['gained bob']);
  });

  it('N = 3, renames against the last record seen, and accounts new to every side', async () => {
    const nights = [['1:amy', '2:bob', '4:dan'], ['2:bob', '4:dan'], ['2:bobby', '4:dan'], ['2:bobby', '5:eve']];
    const { changes, counts } = await changesOf(nights, 3);
    expect(changes).toEqual(['lost amy (last seen night 0)', 'gained eve']);
    expect(counts).toMatchObject({ gained: 1, lost: 1, missing: 1, unchanged: 1 });
    const renamed = await changesOf(nights.slice(0, 3), 3);
    expect(renamed.changes).toEqual(['renamed bobby from bob']);
    expect(renamed.counts).toMatchObject({ renamed: 1, missing: 1 });
  });
});
