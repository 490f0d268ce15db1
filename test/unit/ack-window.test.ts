import { describe, expect, it } from 'vitest';
import { AckWindow } from '../../src/threads/ack-window.js';

/** Whether a promise has settled, after the microtasks queued so far have run. */
async function settledYet(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe('AckWindow', () => {
  it('lets many small batches through without an acknowledgement, bounded by their characters', async () => {
    const window = new AckWindow(1000);
    // Ten batches of 90 characters: 900 in flight, under the bound.
    for (let i = 0; i < 10; i++) {
      expect(await settledYet(window.room())).toBe(true);
      window.posted(90);
    }
    expect(window.pending).toBe(900);
    window.posted(200);
    // 1,100 in flight: the next batch waits for the oldest to be acknowledged.
    const room = window.room();
    expect(await settledYet(room)).toBe(false);
    window.acknowledged();
    expect(window.pending).toBe(1010);
    expect(await settledYet(room)).toBe(false);
    window.acknowledged();
    expect(await settledYet(room)).toBe(true);
    expect(window.pending).toBe(920);
  });

  it('waits for a batch larger than the bound to be acknowledged before the next', async () => {
    const window = new AckWindow(100);
    window.posted(5000);
    const room = window.room();
    expect(await settledYet(room)).toBe(false);
    window.acknowledged();
    expect(await settledYet(room)).toBe(true);
    expect(window.pending).toBe(0);
  });

  it('is drained once every batch is acknowledged, in order', async () => {
    const window = new AckWindow(100);
    expect(await settledYet(window.drained())).toBe(true);
    window.posted(10);
    window.posted(20);
    const drained = window.drained();
    window.acknowledged();
    expect(await settledYet(drained)).toBe(false);
    window.acknowledged();
    expect(await settledYet(drained)).toBe(true);
    // An acknowledgement with nothing in flight changes nothing.
    window.acknowledged();
    expect(window.pending).toBe(0);
  });
});
