import { describe, expect, it } from 'vitest';
import { ChangeOrder, encodeChange, sortEncoded } from '../../src/core/churn/change-order.js';
import { HeldChanges } from '../../src/core/churn/held-changes.js';
import type { ChangeKind } from '../../src/core/churn/merge-diff.js';
import { tempDir } from '../helpers/run.js';

// Issue 22: the worker thread of a hash diff holds the changes of its joins and puts them in
// key order itself while they are few; past its bound it hands them over as they come, and
// the main thread's sort (which spills) orders them, as before.

const KEYS = ['b', 'a"q', 'é', 'a', '10', '9', 'a b', '\u{1F600}', 'Z', 'a\\b', '\ud800', ''];
const change = (key: string, i: number): [string, ChangeKind, string] => [key, i % 2 ? 'lost' : 'gained', `{"username":${JSON.stringify(key)},"i":${i}}`];
const byKey = (keys: string[]) => [...keys].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

describe('HeldChanges', () => {
  it('holds the changes under its bound and gives them in key order at the end', async () => {
    const handedOver: string[][] = [];
    const held = new HeldChanges(1_000_000, async (lines) => void handedOver.push(lines));
    KEYS.forEach((key, i) => held.push(...change(key, i)));
    await held.flush();
    expect(handedOver).toEqual([]);
    const lines = await held.end();
    expect(lines).toEqual(byKey(KEYS).map((key) => encodeChange(...change(key, KEYS.indexOf(key)))));
  });

  it('past its bound hands every change over as it comes, and holds none', async () => {
    const handedOver: string[][] = [];
    const held = new HeldChanges(100, async (lines) => void handedOver.push(lines));
    const pushed: string[] = [];
    KEYS.forEach((key, i) => {
      held.push(...change(key, i));
      pushed.push(encodeChange(...change(key, i)));
    });
    await held.flush();
    // Past 100 characters: what was held goes at once, and each later change as it comes.
    expect(handedOver.flat()).toEqual(pushed);
    held.push(...change('late', 99));
    expect(await held.end()).toEqual([]);
    expect(handedOver.at(-1)).toEqual([encodeChange(...change('late', 99))]);
  });
});

describe('ChangeOrder with changes another thread sorted', () => {
  it('merges them with its own into one key order', async () => {
    const order = new ChangeOrder(tempDir('sgq-held-'));
    const mine = KEYS.filter((_, i) => i % 3 === 0);
    const theirs = KEYS.filter((_, i) => i % 3 !== 0);
    order.pushEncoded(mine.map((key) => encodeChange(...change(key, KEYS.indexOf(key)))));
    await order.sortHeld();
    order.pushSorted(sortEncoded(theirs.map((key) => encodeChange(...change(key, KEYS.indexOf(key))))));
    const got: string[] = [];
    for await (const batch of order.sorted()) for (const c of batch) got.push(JSON.parse(c.line).username as string);
    expect(got).toEqual(byKey(KEYS));
    order.discard();
  });
});
