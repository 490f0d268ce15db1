import { describe, expect, it } from 'vitest';
import { warmUpJoins } from '../../src/core/diff/join-warmup.js';

// Issue 22: while the main thread of a hash diff waits for the worker's side, it joins a
// made-up partition again and again (V8 optimises the join before the real partitions), a
// turn of the event loop between joins, and stops as soon as it is told to.

describe('warmUpJoins', () => {
  it('stops when told to, and gives the event loop a turn between joins', async () => {
    let asked = 0;
    let stop = false;
    setImmediate(() => (stop = true));
    await warmUpJoins(undefined, () => {
      asked++;
      return stop;
    });
    // Told to stop by a callback the event loop ran between two joins.
    expect(stop).toBe(true);
    expect(asked).toBeGreaterThanOrEqual(2);
    expect(asked).toBeLessThan(16);
  });

  it('runs all its rounds, matching by id with renames, when nothing stops it', async () => {
    let asked = 0;
    await warmUpJoins({ older: 'username', newer: 'username' }, () => (asked++, false));
    expect(asked).toBe(16);
  });
});
