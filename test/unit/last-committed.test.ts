import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { batchesOf } from '../../src/core/sort/external-sort.js';
import { SnapshotStore, type SnapshotSubject } from '../../src/core/snapshots/store.js';
import { HINT_FROM } from '../../src/core/snapshots/last-committed.js';
import { tempDir } from '../helpers/run.js';

// The hint a commit leaves in a user's folder (.last-snapshot, core/snapshots/last-committed.ts)
// names the last snapshot committed, so that the next run need not read every metadata file.
// What must hold: the snapshot a run compares with is the one reading them all would choose,
// whatever happened to the folder in between.

const subject: SnapshotSubject & { how: string; user: string } = { profile: 'default', route: 'graph/get_followers', how: 'username', user: 'jack' };
const owner = { pid: process.pid, lock: async () => ({ release: () => undefined }) };
const HINT = '.last-snapshot';

/** A night's snapshot of one record, taken at `at` (any order: clocks move). */
async function commitAt(store: SnapshotStore, at: string) {
  const keyed = [{ key: 'a', line: JSON.stringify({ username: 'a', at }) }];
  const { current, previous } = await store.commit(subject, batchesOf(keyed), { taken_at: at, complete: true, credits_used: 1, pages: 1, sorted_by: 'username', identity: 'username' });
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

describe('the last committed snapshot of a folder, by its hint', () => {
  it('property: a run compares with the snapshot that reading every metadata file chooses, through commits, prunes, clocks moved back, a hint lost, stale or damaged, and commits that left no hint', async () => {
    const step = fc.oneof(
      fc.record({ kind: fc.constant('commit' as const), day: fc.integer({ min: 0, max: 40 }) }),
      fc.record({ kind: fc.constant('prune' as const), keep: fc.integer({ min: 1, max: HINT_FROM + 3 }) }),
      fc.record({ kind: fc.constant('behind' as const), day: fc.integer({ min: 0, max: 40 }) }),
      fc.record({ kind: fc.constant('drop-meta' as const), which: fc.nat() }),
      fc.record({ kind: fc.constant('hint' as const), how: fc.constantFrom('remove', 'damage', 'stale') }),
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
            const { current, previous } = await commitAt(store, nightAt(s.day));
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
          } else if (s.kind === 'hint' && existsSync(folder)) {
            const hint = join(folder, HINT);
            if (s.how === 'remove') rmSync(hint, { force: true });
            if (s.how === 'damage') writeFileSync(hint, '{"meta": "x.json", "seq": ');
            if (s.how === 'stale' && staleHint !== undefined) writeFileSync(hint, staleHint);
          }
        }
        const chosen = store.history(subject).at(-1);
        const { previous } = await commitAt(store, nightAt(41));
        expect(previous?.meta.file).toBe(chosen?.meta.file);
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
    await store.prune(HINT_FROM);
    expect(metasOf(folder)).toHaveLength(HINT_FROM);
    const hint = JSON.parse(readFileSync(join(folder, HINT), 'utf8'));
    expect(hint.seq).toBe(nights);
    const { previous } = await commitAt(store, nightAt(nights + 1));
    expect(previous?.meta.seq).toBe(nights);
  });
});
