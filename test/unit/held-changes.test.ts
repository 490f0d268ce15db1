import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ChangeOrder, encodeChange, sortEncoded } from '../../src/core/diff/change-order.js';
import { HeldChanges } from '../../src/core/diff/held-changes.js';
import type { ChangeKind } from '../../src/core/diff/merge-diff.js';
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

// Each thread puts a partition's changes in key order as soon as the partition is joined; the
// sort at the end only merges those runs. The order must be the one a single sort gives: a
// key is in one partition only, but keys twice (and equal keys across runs) are tried too.
describe('changes sorted a partition at a time', () => {
  const keys = fc.array(fc.oneof(fc.constantFrom(...KEYS), fc.string({ maxLength: 3 })), { maxLength: 60 });
  /** Where partitions end, as indexes into the changes. */
  const cuts = fc.array(fc.nat(60), { maxLength: 8 });
  const lines = (ks: string[]) => ks.map((key, i) => encodeChange(...change(key, i)));

  it('HeldChanges gives the order of one sort, and hands over every change once past its bound', async () => {
    await fc.assert(
      fc.asyncProperty(keys, cuts, fc.constantFrom(1_000_000, 200), async (ks, at, bound) => {
        const handedOver: string[][] = [];
        const held = new HeldChanges(bound, async (batch) => void handedOver.push(batch));
        for (const [i, line] of lines(ks).entries()) {
          held.push(...change(ks[i]!, i));
          expect(encodeChange(...change(ks[i]!, i))).toBe(line);
          if (at.includes(i)) {
            await held.flush();
            held.endPartition();
          }
        }
        const got = await held.end();
        if (handedOver.length) expect([...handedOver.flat(), ...got].sort()).toEqual(lines(ks).sort());
        else expect(got).toEqual(sortEncoded(lines(ks)));
      }),
      { numRuns: 200 },
    );
  });

  it('ChangeOrder gives the changes of one sort (the first of a key twice kept)', async () => {
    await fc.assert(
      fc.asyncProperty(keys, cuts, async (ks, at) => {
        const orders = [new ChangeOrder(tempDir('sgq-held-')), new ChangeOrder(tempDir('sgq-held-'))] as const;
        for (const [i, line] of lines(ks).entries()) {
          for (const order of orders) order.pushEncoded([line]);
          if (at.includes(i)) await orders[0].endPartition();
        }
        const all = async (order: ChangeOrder) => {
          const out: string[] = [];
          for await (const batch of order.sorted()) for (const c of batch) out.push(`${c.change} ${c.line}`);
          return out;
        };
        expect(await all(orders[0])).toEqual(await all(orders[1]));
      }),
      { numRuns: 200 },
    );
  });
});
