import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { MemoryBudget, RunMemory } from '../../src/core/sort/memory-budget.js';
import { SnapshotCapture } from '../../src/core/snapshots/capture.js';
import { SnapshotStore } from '../../src/core/snapshots/store.js';
import { tempDir } from '../helpers/run.js';

// Issue 37: the memory a run's users in flight hold (the bytes of the exports they sort and
// hold for their diffs) is one budget shared by all of them, not one per user: a
// user that cannot hold more while the others hold theirs sorts on disk instead of growing.

const line = (username: string) => JSON.stringify({ username, bio: `bio of ${username}` });
const lines = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => line(`${prefix}${String(n - i).padStart(4, '0')}`));
const bytesOf = (xs: readonly string[]) => xs.reduce((sum, x) => sum + Buffer.byteLength(x) + 1, 0);

describe('MemoryBudget', () => {
  it('gives a share what the others leave free, refuses what does not fit, and takes back what a share releases', () => {
    const budget = new MemoryBudget(100);
    const [a, b] = [budget.share(), budget.share()];
    expect(a.resize(70)).toBe(true);
    expect(b.resize(40)).toBe(false);
    expect(b.held).toBe(0);
    expect(b.resize(30)).toBe(true);
    expect(budget.held).toBe(100);
    // Refused, a share keeps what it held; shrinking always succeeds.
    expect(a.resize(71)).toBe(false);
    expect(a.held).toBe(70);
    expect(a.resize(20)).toBe(true);
    expect(b.resize(80)).toBe(true);
    a.release();
    b.release();
    expect(budget.held).toBe(0);
  });
});

describe('SnapshotCapture: the users of a run share one budget', () => {
  const store = new SnapshotStore(tempDir('sgq-store-'), { pid: process.pid, lock: async () => ({ release: () => undefined }) }, 'sandbox');
  const subject = (user: string) => ({ profile: 'default', route: 'graph/get_followers', how: 'username', user });
  const meta = { taken_at: '2026-01-02T03:15:00.000Z', complete: true, credits_used: 1 };
  const records = (prefix: string, n: number) => lines(prefix, n).map((l) => JSON.parse(l) as Record<string, string>);
  const stagedText = async (capture: SnapshotCapture) => {
    const staged = await capture.stage(meta);
    const text = gunzipSync(readFileSync(staged.current.dataPath)).toString('utf8');
    await staged.drop();
    await staged.close();
    return text;
  };

  it('a user whose export does not fit beside the one held for its diff sorts it on disk; the next, once that one is released, holds its own', async () => {
    const one = records('a', 40);
    // What a capture holds: its lines' bytes, each ended by LF.
    const size = bytesOf(one.map((r) => JSON.stringify(r)));
    // Room for one export: not for a second export beside it.
    const memory = new RunMemory(size + 100);
    const held = new SnapshotCapture(store, subject('held'), undefined, memory);
    await held.add(one, false);
    await stagedText(held);
    expect(held.inOrder?.count).toBe(40);
    // Its bytes, kept for its diff.
    expect(memory.lines.held).toBe(size);
    const other = new SnapshotCapture(store, subject('other'), undefined, memory);
    await other.add(records('b', 40), false);
    const text = await stagedText(other);
    expect(other.inOrder).toBeUndefined();
    expect(text).toBe(`${lines('b', 40).reverse().join('\n')}\n`);
    other.release();
    expect(memory.lines.held).toBe(size);
    held.release();
    expect(memory.lines.held).toBe(0);
    const next = new SnapshotCapture(store, subject('next'), undefined, memory);
    await next.add(records('c', 40), false);
    await stagedText(next);
    expect(next.inOrder?.count).toBe(40);
    next.discard();
    expect(memory.lines.held).toBe(0);
  });

  it("counts what a user holds as its lines' UTF-8 bytes, from the page they came in until it is released", async () => {
    const one = records('é🏳️‍🌈', 40);
    const size = bytesOf(one.map((r) => JSON.stringify(r)));
    const memory = new RunMemory(4 * size);
    const capture = new SnapshotCapture(store, subject('bytes'), undefined, memory);
    await capture.add(one.slice(0, 25), false);
    expect(memory.lines.held).toBe(bytesOf(one.slice(0, 25).map((r) => JSON.stringify(r))));
    await capture.add(one.slice(25), false);
    expect(memory.lines.held).toBe(size);
    const text = await stagedText(capture);
    expect(Buffer.byteLength(text)).toBe(size);
    expect(memory.lines.held).toBe(size);
    capture.release();
    expect(memory.lines.held).toBe(0);
  });
});
