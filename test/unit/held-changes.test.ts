import { describe, expect, it } from 'vitest';
import { changeLines } from '../../src/core/churn/change-lines.js';
import { ChangeOrder, encodeChange, sortEncoded, writeEncoded } from '../../src/core/churn/change-order.js';
import { asKeyed } from '../../src/core/churn/written-changes.js';
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
    const items = await held.end();
    expect(items.map((item) => item.line)).toEqual(byKey(KEYS).map((key) => encodeChange(...change(key, KEYS.indexOf(key)))));
    expect(items.map((item) => item.key)).toEqual(byKey(KEYS));
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

  const encoded = (keys: string[]) => keys.map((key) => encodeChange(...change(key, KEYS.indexOf(key))));
  const allLines = (renames: boolean) => changeLines(byKey(KEYS).map((key) => ({ change: change(key, KEYS.indexOf(key))[1], line: change(key, KEYS.indexOf(key))[2] })), renames);
  const linesOf = async (order: ChangeOrder, renames: boolean) => {
    const chunks: Buffer[] = [];
    for await (const chunk of order.lines(renames)) chunks.push(Buffer.from(chunk));
    return Buffer.concat(chunks).toString();
  };

  it('asked for lines, merges the lines each thread wrote into those the CLI wrote', async () => {
    for (const renames of [false, true]) {
      const order = new ChangeOrder(tempDir('sgq-held-'));
      order.pushEncoded(encoded(KEYS.filter((_, i) => i % 3 === 0)));
      await order.sortHeld({ renames });
      order.pushWritten(writeEncoded(sortEncoded(encoded(KEYS.filter((_, i) => i % 3 !== 0))), renames));
      expect(await linesOf(order, renames)).toBe(allLines(renames));
      order.discard();
    }
  });

  it('merges written lines with changes still encoded (handed over after, or spilled) into the same lines', async () => {
    const order = new ChangeOrder(tempDir('sgq-held-'));
    const [mine, theirs, late] = [0, 1, 2].map((r) => KEYS.filter((_, i) => i % 3 === r)) as [string[], string[], string[]];
    order.pushEncoded(encoded(mine));
    await order.sortHeld({ renames: true });
    order.pushEncoded(encoded(late));
    order.pushWritten(writeEncoded(sortEncoded(encoded(theirs)), true));
    expect(await linesOf(order, true)).toBe(allLines(true));
    order.discard();
  });

  it('leaves the changes from the first it cannot write encoded, to fail where the merge reaches it', async () => {
    const items = sortEncoded([encodeChange('a', 'lost', '{"username":"a"}'), encodeChange('b', 'gained', '{"username":"b",oops}'), encodeChange('c', 'lost', '{"username":"c"}')]);
    const written = writeEncoded(items, false);
    expect(written.written).toBe(1);
    expect(asKeyed(written).map((item) => item.line)).toEqual(['{"change":"lost","username":"a"}\n', items[1]!.line, items[2]!.line]);
    const order = new ChangeOrder(tempDir('sgq-held-'));
    order.pushWritten(written);
    const got: string[] = [];
    await expect(
      (async () => {
        for await (const chunk of order.lines(false)) got.push(Buffer.from(chunk).toString());
      })(),
    ).rejects.toThrow();
    expect(got.join('')).toBe('');
  });
});
