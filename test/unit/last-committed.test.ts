import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { batchesOf } from '../../src/core/sort/external-sort.js';
import { SnapshotStore, newestInOrder, type SnapshotSubject, type StoredSnapshot } from '../../src/core/snapshots/store.js';
import { HINT_FROM, metaNames, readHint } from '../../src/core/snapshots/last-committed.js';
import { periodBefore, planNight, reachesLastWhole } from '../../src/core/snapshots/full-every.js';
import { confirmationWindow, reachesWindow } from '../../src/core/snapshots/confirm-lost.js';
import { tempDir } from '../helpers/run.js';

// The hint a commit leaves in a user's folder (.last-snapshot, core/snapshots/last-committed.ts)
// names the last snapshot committed, so that the next run need not read every metadata file.
// What must hold: the snapshot a run compares with is the one reading them all would choose,
// whatever happened to the folder in between.

const subject: SnapshotSubject & { how: string; user: string } = { profile: 'default', route: 'graph/get_followers', how: 'username', user: 'jack' };
const owner = { pid: process.pid, lock: async () => ({ release: () => undefined }) };
const HINT = '.last-snapshot';

/** A night's snapshot of one record, taken at `at` (any order: clocks move); partial as --full-every's nights between whole ones are. */
async function commitAt(store: SnapshotStore, at: string, partial = false) {
  const keyed = [{ key: 'a', line: JSON.stringify({ username: 'a', at }) }];
  const { current, previous } = await store.commit(subject, batchesOf(keyed), { taken_at: at, complete: true, credits_used: 1, pages: 1, sorted_by: 'username', identity: 'username', ...(partial && { partial }) });
  await Promise.all([current.handle.close(), previous?.handle.close()]);
  return { current, previous };
}

const nightAt = (day: number) => new Date(Date.UTC(2026, 10, 1) + day * 86_400_000).toISOString();
const metasOf = (folder: string) => readdirSync(folder).filter((n) => !n.startsWith('.') && n.endsWith('.json'));

/** What an older sgq (or another tool) does: commits a snapshot after the last without touching the hint. */
function commitBehindTheHint(folder: string, at: string, seq: number) {
  const base = `${at.replaceAll(':', '-')}-old${seq}`;
  const some = readdirSync(folder).find((n) => n.endsWith('.ndjson.gz') && !n.startsWith('.'))!;
  copyFileSync(join(folder, some), join(folder, `${base}.ndjson.gz`));
  const meta = { version: 1, ...subject, taken_at: at, complete: true, credits_used: 1, pages: 1, sorted_by: 'username', identity: 'username', records: 1, file: `${base}.ndjson.gz`, seq };
  writeFileSync(join(folder, `${base}.json`), `${JSON.stringify(meta, null, 2)}\n`);
}

const files = (snapshots: readonly StoredSnapshot[]) => snapshots.map((s) => s.meta.file);

/** What --full-every's plan and --confirm-lost's window read of the newest snapshots is what they read of the whole history. */
function expectNewestAgrees(store: SnapshotStore) {
  const history = store.history(subject);
  const options = { fullEvery: 4, full: false };
  const tail = store.newest(subject, reachesLastWhole);
  expect(files(history).slice(history.length - tail.length)).toEqual(files(tail));
  expect(JSON.stringify(planNight(tail, options))).toBe(JSON.stringify(planNight(history, options)));
  for (const n of [1, 2, 3]) {
    const newest = store.newest(subject, (t) => reachesWindow(t, n));
    expect(files(history).slice(history.length - newest.length)).toEqual(files(newest));
    const [window, all] = [confirmationWindow(newest, n), confirmationWindow(history, n)];
    expect(files(window)).toEqual(files(all));
    if (all[0]) expect(files(periodBefore(newest, window[0]!))).toEqual(files(periodBefore(history, all[0])));
    expect(newest.findLast((s) => !s.meta.partial)?.meta.file).toBe(history.findLast((s) => !s.meta.partial)?.meta.file);
  }
}

describe('the last committed snapshot of a folder, by its hint', () => {
  it('property: a run compares with the snapshot that reading every metadata file chooses, through commits, prunes, clocks moved back, a hint lost, stale or damaged, and commits that left no hint', async () => {
    const step = fc.oneof(
      fc.record({ kind: fc.constant('commit' as const), day: fc.integer({ min: 0, max: 40 }), partial: fc.boolean() }),
      fc.record({ kind: fc.constant('prune' as const), keep: fc.integer({ min: 1, max: HINT_FROM + 3 }) }),
      fc.record({ kind: fc.constant('behind' as const), day: fc.integer({ min: 0, max: 40 }) }),
      fc.record({ kind: fc.constant('drop-meta' as const), which: fc.nat() }),
      fc.record({ kind: fc.constant('hint' as const), how: fc.constantFrom('remove', 'damage', 'stale') }),
      fc.record({ kind: fc.constant('stray' as const), what: fc.constantFrom('{"version": 2}', 'not json', '[]') }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 14 }), async (steps) => {
        const store = new SnapshotStore(tempDir('sgq-last-'), owner, 'sandbox');
        const folder = store.folder(subject);
        let staleHint: string | undefined;
        // Enough nights that the hint is kept (HINT_FROM); prunes may take the folder below it again.
        for (let day = 0; day < HINT_FROM; day++) await commitAt(store, nightAt(day));
        for (const s of steps) {
          const chosen = store.history(subject).at(-1);
          if (s.kind === 'commit') {
            const { current, previous } = await commitAt(store, nightAt(s.day), s.partial);
            expect(previous?.meta.file).toBe(chosen?.meta.file);
            expect(current.meta.seq).toBe((chosen?.meta.seq ?? 0) + 1);
            if (existsSync(join(folder, HINT))) staleHint ??= readFileSync(join(folder, HINT), 'utf8');
          } else if (s.kind === 'prune') {
            await store.prune(s.keep);
          } else if (s.kind === 'behind' && chosen) {
            commitBehindTheHint(folder, nightAt(s.day), (chosen.meta.seq ?? 0) + 1);
          } else if (s.kind === 'drop-meta' && chosen) {
            const metas = metasOf(folder);
            rmSync(join(folder, metas[s.which % metas.length]!));
          } else if (s.kind === 'stray' && existsSync(folder)) {
            // A .json file that is no snapshot (planted, damaged, another tool's): never one of the order.
            writeFileSync(join(folder, `zz-stray-${metasOf(folder).length}.json`), s.what);
          } else if (s.kind === 'hint' && existsSync(folder)) {
            const hint = join(folder, HINT);
            if (s.how === 'remove') rmSync(hint, { force: true });
            if (s.how === 'damage') writeFileSync(hint, '{"meta": "x.json", "seq": ');
            if (s.how === 'stale' && staleHint !== undefined) writeFileSync(hint, staleHint);
          }
        }
        expectNewestAgrees(store);
        const chosen = store.history(subject).at(-1);
        const { previous } = await commitAt(store, nightAt(41));
        expect(previous?.meta.file).toBe(chosen?.meta.file);
        expectNewestAgrees(store);
      }),
      { numRuns: 60 },
    );
  });

  it('is what a commit leaves from HINT_FROM snapshots on, and what the next run reads instead of every metadata file (an older one edited in place is not read)', async () => {
    const store = new SnapshotStore(tempDir('sgq-last-'), owner, 'sandbox');
    const folder = store.folder(subject);
    const first = await commitAt(store, nightAt(1));
    for (let day = 2; day < HINT_FROM; day++) await commitAt(store, nightAt(day));
    // Fewer: the folder is read whole, and no hint is kept.
    expect(existsSync(join(folder, HINT))).toBe(false);
    const second = await commitAt(store, nightAt(HINT_FROM));
    const hint = JSON.parse(readFileSync(join(folder, HINT), 'utf8'));
    expect(hint).toMatchObject({ meta: second.current.meta.file.replace('.ndjson.gz', '.json'), seq: HINT_FROM });
    // A hand edit of the first one's seq (which changes no name) would make it the last for a
    // full read; the hint still names the second: proof that the run did not read them all.
    const firstMeta = join(folder, first.current.meta.file.replace('.ndjson.gz', '.json'));
    writeFileSync(firstMeta, JSON.stringify({ ...JSON.parse(readFileSync(firstMeta, 'utf8')), seq: 99 }));
    expect(store.history(subject).at(-1)!.meta.seq).toBe(99);
    const third = await commitAt(store, nightAt(HINT_FROM + 1));
    expect(third.previous?.meta.file).toBe(second.current.meta.file);
  });

  it('is kept up by a prune, so that nightly runs followed by a prune read one metadata file each', async () => {
    const store = new SnapshotStore(tempDir('sgq-last-'), owner, 'sandbox');
    const folder = store.folder(subject);
    const nights = HINT_FROM + 3;
    for (let day = 1; day <= nights; day++) await commitAt(store, nightAt(day));
    rmSync(join(folder, HINT));
    // A .json file that is no snapshot stays, and is among the names the hint is written over;
    // a data file no metadata names (a crash between the two) goes.
    writeFileSync(join(folder, 'notes.json'), '{"mine": true}');
    writeFileSync(join(folder, '2026-01-01T00-00-00.000Z-abcdef.ndjson.gz'), '');
    await store.prune(HINT_FROM);
    expect(metasOf(folder)).toHaveLength(HINT_FROM + 1);
    expect(readdirSync(folder)).not.toContain('2026-01-01T00-00-00.000Z-abcdef.ndjson.gz');
    // Written over the folder as the prune left it: believed.
    expect(readHint(folder, metaNames(readdirSync(folder)))?.seq).toBe(nights);
    const hint = JSON.parse(readFileSync(join(folder, HINT), 'utf8'));
    expect(hint.seq).toBe(nights);
    expect(hint.order).toEqual(store.history(subject).map((s) => s.metaPath.split('/').at(-1)));
    const { previous } = await commitAt(store, nightAt(nights + 1));
    expect(previous?.meta.seq).toBe(nights);
  });

  it("keeps the folder's order, so that --full-every and --confirm-lost read the newest snapshots only (an older one edited in place is not read)", async () => {
    const store = new SnapshotStore(tempDir('sgq-last-'), owner, 'sandbox');
    const folder = store.folder(subject);
    // Two periods of four nights: whole, then three partial ones; then a whole night and one partial.
    const nights = [false, true, true, true, false, true, true, true, false, true];
    const committed: StoredSnapshot[] = [];
    for (const [day, partial] of nights.entries()) committed.push((await commitAt(store, nightAt(day), partial)).current);
    const metaOf = (i: number) => committed[i]!.meta.file.replace('.ndjson.gz', '.json');
    expect(JSON.parse(readFileSync(join(folder, HINT), 'utf8')).order).toEqual(committed.map((_, i) => metaOf(i)));
    // A hand edit of the first one's seq makes it the newest for a full read, not for newest().
    const firstMeta = join(folder, metaOf(0));
    writeFileSync(firstMeta, JSON.stringify({ ...JSON.parse(readFileSync(firstMeta, 'utf8')), seq: 99 }));
    expect(store.history(subject).at(-1)!.meta.file).toBe(committed[0]!.meta.file);
    expect(files(store.newest(subject, reachesLastWhole))).toEqual(files(committed.slice(8)));
    // Two complete period ends back, and the whole night opening the older one's period.
    expect(files(store.newest(subject, (t) => reachesWindow(t, 2)))).toEqual(files(committed.slice(4)));
    // Reading that far back meets the edited seq out of order: the folder is read whole, as history() does.
    expect(files(store.newest(subject, () => false))).toEqual(files(store.history(subject)));
    expect(files(store.history(subject))).toEqual(files([...committed.slice(1), committed[0]!]));
  });

  it('keeps an order where the folder holds a .json file that is no snapshot: the order leaves it out', async () => {
    const store = new SnapshotStore(tempDir('sgq-last-'), owner, 'sandbox');
    const folder = store.folder(subject);
    for (let day = 0; day < HINT_FROM; day++) await commitAt(store, nightAt(day));
    writeFileSync(join(folder, 'notes.json'), '{"mine": true}');
    const last = await commitAt(store, nightAt(HINT_FROM));
    const hint = JSON.parse(readFileSync(join(folder, HINT), 'utf8'));
    expect(hint.order).toHaveLength(HINT_FROM + 1);
    expect(hint.order).not.toContain('notes.json');
    expect(files(store.newest(subject, reachesLastWhole))).toEqual([last.current.meta.file]);
  });

  it('is written over the names the stage listed: a metadata file removed or planted by hand before the commit leaves a hint the next run does not believe', async () => {
    for (const change of ['removed', 'planted'] as const) {
      const store = new SnapshotStore(tempDir('sgq-last-'), owner, 'sandbox');
      const folder = store.folder(subject);
      const committed: StoredSnapshot[] = [];
      for (let day = 0; day < HINT_FROM + 1; day++) committed.push((await commitAt(store, nightAt(day))).current);
      const keyed = [{ key: 'a', line: '{"username":"a"}' }];
      const staged = await store.stage(subject, batchesOf(keyed), { taken_at: nightAt(HINT_FROM + 1), complete: true, credits_used: 1, pages: 1, sorted_by: 'username', identity: 'username' });
      const metaOf = (s: StoredSnapshot) => join(folder, s.meta.file.replace('.ndjson.gz', '.json'));
      if (change === 'removed') rmSync(metaOf(committed[0]!));
      else commitBehindTheHint(folder, nightAt(0), 1);
      await staged.commit();
      await staged.close();
      // A hand edit that makes an older one the last for a full read: the next run follows it,
      // so it read the folder whole rather than believe the hint.
      const older = metaOf(committed[1]!);
      writeFileSync(older, JSON.stringify({ ...JSON.parse(readFileSync(older, 'utf8')), seq: 99 }));
      const { previous } = await commitAt(store, nightAt(HINT_FROM + 2));
      expect(previous?.meta.file, change).toBe(committed[1]!.meta.file);
    }
  });

  it('reads the folder whole where the hint keeps no order (sgq before 5.3.9), once: the next commit keeps it', async () => {
    const store = new SnapshotStore(tempDir('sgq-last-'), owner, 'sandbox');
    const folder = store.folder(subject);
    for (let day = 0; day < HINT_FROM + 2; day++) await commitAt(store, nightAt(day), day % 3 !== 0);
    const hint = JSON.parse(readFileSync(join(folder, HINT), 'utf8'));
    const { order, ...older } = hint;
    writeFileSync(join(folder, HINT), `${JSON.stringify(older)}\n`);
    expect(files(store.newest(subject, reachesLastWhole))).toEqual(files(store.history(subject)));
    await commitAt(store, nightAt(HINT_FROM + 2), true);
    expect(JSON.parse(readFileSync(join(folder, HINT), 'utf8')).order).toEqual([...order, metasOf(folder).find((n) => !order.includes(n))]);
    expect(store.newest(subject, reachesLastWhole).length).toBeLessThan(store.history(subject).length);
  });
});

describe('newestInOrder', () => {
  const snapshot = (name: string, seq: number, partial = false) => ({ meta: { file: name, seq, ...(partial && { partial }) }, metaPath: name, dataPath: name }) as unknown as StoredSnapshot;
  const order = ['a', 'b', 'c', 'd', 'e'];

  it('reads from the newest back, no further than what is enough', () => {
    const read: string[] = [];
    const byName = (name: string) => (read.push(name), snapshot(name, order.indexOf(name) + 1, name !== 'c'));
    const tail = newestInOrder(order, byName, reachesLastWhole);
    expect([files(tail!), read]).toEqual([['c', 'd', 'e'], ['e', 'd', 'c']]);
  });

  it('gives up (the caller reads the folder whole) on a snapshot it cannot read, or seq that do not fall back in order', () => {
    expect(newestInOrder(order, (name) => (name === 'd' ? undefined : snapshot(name, 1)), () => false)).toBeUndefined();
    expect(newestInOrder(order, (name) => snapshot(name, name === 'c' ? 9 : order.indexOf(name) + 1), () => false)).toBeUndefined();
    expect(newestInOrder(order, (name) => snapshot(name, 0), () => false)).toBeUndefined();
  });

  it('gives all of them, in order, when none is enough', () => {
    expect(files(newestInOrder(order, (name) => snapshot(name, order.indexOf(name) + 1, true), reachesLastWhole)!)).toEqual(order);
  });
});
