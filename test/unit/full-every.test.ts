// --full-every N (src/core/snapshots/full-every.ts, partial.ts, confirm-lost.ts): which night is
// whole, what a period is, a partial snapshot's merge, and the window a loss is judged in.
import { describe, expect, it } from 'vitest';
import { confirmationWindow, diffWindow } from '../../src/core/snapshots/confirm-lost.js';
import { periodBefore, periodEnds, planNight } from '../../src/core/snapshots/full-every.js';
import type { Keyed } from '../../src/core/records/keyed.js';
import type { Change } from '../../src/core/diff/merge-diff.js';
import { mergeOnto } from '../../src/core/snapshots/partial.js';
import type { SnapshotMeta, StoredSnapshot } from '../../src/core/snapshots/store.js';

/** A stored snapshot of night `n`: whole (W) or partial (P). */
function snap(kind: 'W' | 'P', n: number, meta: Partial<SnapshotMeta> = {}): StoredSnapshot {
  const base = { version: 1, profile: 'default', route: 'graph/get_followers', how: 'username', user: 'jack', taken_at: `night ${n}`, complete: true, pages: 10, records: 5000, credits_used: 30, sorted_by: 'follower_userid', identity: 'id', file: `${n}.ndjson.gz`, seq: n } as const;
  return { meta: { ...base, ...(kind === 'P' ? { partial: true as const, pages: 1 } : {}), ...meta }, dataPath: `/x/${n}.ndjson.gz`, metaPath: `/x/${n}.json` };
}

/** A store of snapshots from a word such as `WPPWP`, nights 1, 2, … */
const store = (word: string) => [...word].map((k, i) => snap(k as 'W' | 'P', i + 1));
const plan = (word: string, options: Partial<Parameters<typeof planNight>[1]> = {}) => {
  const p = planNight(store(word), { fullEvery: 4, full: false, ...options });
  return p.whole ? `whole: ${p.why}` : `since ${p.since}: ${p.why}`;
};

describe('planNight: whole on runs 1, 1+N, 1+2N, …', () => {
  it('counts the partial snapshots since the last whole one', () => {
    expect(plan('')).toBe('whole: its first snapshot');
    expect(plan('W')).toBe('since night 1: run 2 of 4');
    expect(plan('WPP')).toBe('since night 3: run 4 of 4');
    expect(plan('WPPP')).toBe('whole: every 4 runs');
    expect(plan('WPPPWP')).toBe('since night 6: run 3 of 4');
    // A whole night between (--full, a fallback) starts the count again.
    expect(plan('WPWP')).toBe('since night 4: run 3 of 4');
    expect(plan('W', { fullEvery: 1 })).toBe('whole: every run is whole');
  });

  it('is whole tonight with --full, after a run cut short, without a whole snapshot kept, or on a snapshot it cannot add to', () => {
    expect(plan('WP', { full: true })).toBe('whole: a whole run was asked for');
    expect(plan('WP', { cutShort: 'it stopped at --max-credits' })).toBe('whole: its last run kept nothing: it stopped at --max-credits');
    expect(plan('PP')).toBe('whole: no whole snapshot of it is kept');
    expect(planNight([snap('W', 1, { identity: 'none' })], { fullEvery: 4, full: false }).whole).toBe(true);
    expect(planNight([snap('W', 1, { identity: undefined, records: 0 })], { fullEvery: 4, full: false }).whole).toBe(true);
    expect(plan('W', { key: 'follower_username' })).toBe('whole: its last snapshot is keyed by follower_userid, not by follower_username, the key asked for');
    // Since the start of a run taken by a clock that was ahead: nothing would come; the whole list instead.
    expect(plan('W', { startedAt: 'night 0' })).toBe("whole: its last snapshot says it was taken at night 1, after this run's start: a clock was ahead");
    expect(plan('W', { startedAt: 'night 2' })).toBe('since night 1: run 2 of 4');
    // The pages its last whole snapshot took: what --dry-run expects.
    const whole = planNight(store('WPPP'), { fullEvery: 4, full: false });
    expect(whole).toMatchObject({ whole: true, pages: 10 });
  });
});

describe('periods: a whole snapshot and the partial ones after it', () => {
  const names = (list: StoredSnapshot[]) => list.map((s) => s.meta.taken_at.replace('night ', ''));
  it('ends each period with its last snapshot; the last snapshot ends the one in progress', () => {
    expect(names(periodEnds(store('WWW')))).toEqual(['1', '2', '3']);
    expect(names(periodEnds(store('WPPWPW')))).toEqual(['3', '5', '6']);
    expect(names(periodEnds(store('WPP')))).toEqual(['3']);
    const all = store('WPPWP');
    expect(names(periodBefore(all, all[2]!))).toEqual(['1', '2']);
    expect(names(periodBefore(all, all[4]!))).toEqual(['4']);
    expect(names(periodBefore(all, all[3]!))).toEqual([]);
  });

  it('--confirm-lost N judges the ends of the last N periods', () => {
    expect(names(confirmationWindow(store('WPPWPWP'), 2))).toEqual(['5', '7']);
    expect(names(confirmationWindow(store('WPPWPWP'), 1))).toEqual(['7']);
  });
});

/** Accounts `id:name` in key order, as one batch. */
async function* side(accounts: string[]): AsyncGenerator<Keyed[]> {
  const sorted = [...accounts].sort();
  yield sorted.map((a) => ({ key: a.split(':')[0]!, line: JSON.stringify({ userid: a.split(':')[0], username: a.split(':')[1] }) }));
}

async function collect(batches: AsyncIterable<Keyed[]>): Promise<string[]> {
  const out: string[] = [];
  for await (const batch of batches) for (const k of batch) out.push((JSON.parse(k.line) as { username: string }).username);
  return out;
}

describe('a partial snapshot: the one before with what came merged in', () => {
  it('holds every account of both once, the newer record where both have one', async () => {
    expect(await collect(mergeOnto(side(['1:amy', '3:cat', '5:eve']), side(['2:bob', '3:kit', '6:fay'])))).toEqual(['amy', 'bob', 'kit', 'eve', 'fay']);
    expect(await collect(mergeOnto(side(['1:amy']), side([])))).toEqual(['amy']);
    expect(await collect(mergeOnto(side([]), side(['1:amy'])))).toEqual(['amy']);
  });
});

describe('diffWindow over periods', () => {
  const who = (c: Change) => `${c.change} ${(JSON.parse(c.line) as { username: string }).username}${c.lastSeen ? ` after ${c.lastSeen}` : ''}`;
  const judge = async (earlier: [string, string[]][], current: string[], options: { confirmLost: number; partial?: boolean; within?: [string, string[]][] }) => {
    const changes: Change[] = [];
    const sides = (list: [string, string[]][]) => list.map(([takenAt, accounts]) => ({ takenAt, records: side(accounts) }));
    const counts = await diffWindow(sides(earlier), side(current), { ...options, within: options.within && sides(options.within) }, async (batch) => void changes.push(...batch));
    return { changes: changes.map(who), counts };
  };

  it('a loss after partial nights: left after the first snapshot of the period that held it', async () => {
    // Whole night 1 held amy and bob; night 2 (partial) added cat; night 3 (partial) added dan; night 4 (whole) misses bob and cat.
    const { changes } = await judge([['night 3', ['1:amy', '2:bob', '3:cat', '4:dan']]], ['1:amy', '4:dan'], {
      confirmLost: 1,
      within: [
        ['night 1', ['1:amy', '2:bob']],
        ['night 2', ['1:amy', '2:bob', '3:cat']],
      ],
    });
    expect(changes).toEqual(['lost bob after night 1', 'lost cat after night 2']);
  });

  it('a partial snapshot loses nobody, and counts none as missing', async () => {
    const { changes, counts } = await judge(
      [
        ['night 1', ['1:amy', '2:bob']],
        ['night 3', ['1:amy', '3:cat']],
      ],
      ['1:amy', '3:cat', '4:dan'],
      { confirmLost: 2, partial: true },
    );
    expect(changes).toEqual(['gained dan']);
    expect(counts.missing).toBe(0);
  });
});
