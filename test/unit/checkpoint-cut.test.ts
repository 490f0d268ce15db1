import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseJson, parsedLosslessly } from '../../src/core/json.js';
import { Checkpoints, type Checkpoint } from '../../src/cli/run/checkpoint.js';
import { SinceMarks } from '../../src/cli/run/since-marks.js';
import { DatasetCheckpoint } from '../../src/cli/dataset/dataset-checkpoint.js';
import { grantedRecords } from '../../src/cli/dataset/writer.js';
import { SnapshotCheckpoint } from '../../src/cli/snapshots/snapshot-jobs.js';
import { SnapshotStore } from '../../src/core/snapshots/store.js';
import { readParquet } from '../helpers/duckdb.js';
import { tempDir } from '../helpers/run.js';

// The commit rule's cut: a commit covers what was staged when the output was found durable
// (the instant Checkpoints.commit() is called), never what jobs stage while that commit waits
// behind an earlier one or while a checkpoint before it is written. Each test holds a commit
// open with a gate it opens itself, stages in that window, and looks at what was committed.

const NIGHT = new Date('2026-11-20T03:15:00Z');
const WORKER = fileURLToPath(new URL('../../dist/dataset-worker.cjs', import.meta.url));

/** A checkpoint opened first whose commit is written only when the test opens its gate. */
function gated() {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  let staged = false;
  const checkpoint: Checkpoint & { stage(): void; commit(): Promise<void> } = {
    what: 'the gated checkpoint',
    get pending() {
      return staged;
    },
    due: true,
    stage: () => void (staged = true),
    cut() {
      staged = false;
      return () => gate;
    },
    commit: () => gate,
    drop: async () => void (staged = false),
    close: async () => undefined,
  };
  return { checkpoint, open };
}

const savedMarks = (file: string): string[] => (existsSync(file) ? Object.keys(Object.values((JSON.parse(readFileSync(file, 'utf8')) as { services: Record<string, object> }).services)[0] ?? {}) : []);

describe('a commit takes its cut when it is called', () => {
  it('a --since-last mark staged while a checkpoint before the marks is written waits for the next commit', async () => {
    const file = join(tempDir(), 'marks.json');
    const checkpoints = new Checkpoints();
    const first = gated();
    checkpoints.add(first.checkpoint);
    const marks = checkpoints.add(await SinceMarks.open(file, { service: 'https://svc.example', profile: 'default' }, { waitMs: 0 }));
    first.checkpoint.stage();
    marks.stage('a', NIGHT);
    const committing = checkpoints.commit();
    // Another job ends now: its records were never checked durable.
    marks.stage('b', NIGHT);
    first.open();
    await committing;
    expect(savedMarks(file)).toEqual(['a']);
    expect(marks.pending).toBe(true);
    await checkpoints.commit();
    expect(savedMarks(file)).toEqual(['a', 'b']);
    await checkpoints.close();
  });

  it('a commit queued behind one still in progress commits what was staged when it was called, no more', async () => {
    const file = join(tempDir(), 'marks.json');
    const checkpoints = new Checkpoints();
    const first = gated();
    checkpoints.add(first.checkpoint);
    const marks = checkpoints.add(await SinceMarks.open(file, { service: 'https://svc.example', profile: 'default' }, { waitMs: 0 }));
    first.checkpoint.stage();
    marks.stage('a', NIGHT);
    const earlier = checkpoints.commit();
    marks.stage('b', NIGHT);
    // The output was found durable again, with b's records: b is in this cut.
    const later = checkpoints.commit();
    // c is staged while both wait: covered by neither check.
    marks.stage('c', NIGHT);
    first.open();
    await Promise.all([earlier, later]);
    expect(savedMarks(file)).toEqual(['a', 'b']);
    expect(marks.pending).toBe(true);
    // The output that would have held c failed: c is dropped, a and b stay.
    await checkpoints.drop();
    await checkpoints.close();
    expect(savedMarks(file)).toEqual(['a', 'b']);
  });

  it('the dataset seals only the pages sent before the cut; a page sent in the window goes to the next commit', async () => {
    for (const workerFile of [WORKER, null]) {
      const dir = tempDir('sgq-dataset-');
      const checkpoints = new Checkpoints();
      const first = gated();
      checkpoints.add(first.checkpoint);
      const dataset = checkpoints.add(
        await DatasetCheckpoint.open({
          dir,
          route: 'graph.get_followers',
          startedAt: new Date('2026-11-01T00:00:00Z'),
          reporter: { warn: () => undefined, info: () => undefined, error: () => undefined, trace: () => undefined },
          stop: () => undefined,
          lockOptions: {},
          owner: { service: 'sandbox', profile: 'default' },
          workerFile,
        }),
      );
      const send = (names: string[]) => {
        const text = `{"data":[${names.map((n) => `{"username":"${n}"}`).join(',')}]}`;
        const page = { text, granted: names.length, wholeBodyIsRecord: false, lossless: parsedLosslessly(parseJson(text)) };
        return dataset.hooks('jack', {}).onRecords!(grantedRecords(page), page.lossless, page);
      };
      const folder = join(dir, 'records', 'route=graph.get_followers', 'date=2026-11-01');
      const committed = async () => (existsSync(folder) ? (await Promise.all(readdirSync(folder).map((name) => readParquet(join(folder, name), { asText: true })))).flatMap(({ rows }) => rows.map((r) => String(r.username))).sort() : []);
      try {
        first.checkpoint.stage();
        await send(['a1', 'a2']);
        const committing = checkpoints.commit();
        await send(['b1']);
        first.open();
        await committing;
        expect(await committed(), String(workerFile)).toEqual(['a1', 'a2']);
        expect(dataset.pending).toBe(true);
        await checkpoints.commit();
        expect(await committed(), String(workerFile)).toEqual(['a1', 'a2', 'b1']);
      } finally {
        await checkpoints.close();
      }
    }
  }, 60_000);

  it('a snapshot staged in the window is not committed by the commit before it', async () => {
    const root = tempDir();
    const snapshots = SnapshotCheckpoint.open({ root } as never);
    const log: string[] = [];
    // Staged snapshots as the hooks leave them (the store is not what this test is about).
    const stage = (user: string) => {
      const held = { user, lock: { release: () => log.push(`release ${user}`) }, staged: { commit: async () => void log.push(`commit ${user}`), drop: async () => void log.push(`drop ${user}`), close: async () => undefined } };
      const inner = snapshots as unknown as { held: Map<string, unknown>; staged: Set<unknown> };
      inner.held.set(user, held);
      inner.staged.add(held);
    };
    const checkpoints = new Checkpoints();
    const first = gated();
    checkpoints.add(first.checkpoint);
    checkpoints.add(snapshots);
    first.checkpoint.stage();
    stage('jack');
    const committing = checkpoints.commit();
    stage('bob');
    first.open();
    await committing;
    expect(log).toEqual(['commit jack', 'release jack']);
    expect(snapshots.pending).toBe(true);
    // The run's output failed after bob's records: bob's snapshot is dropped, never committed.
    await checkpoints.drop();
    expect(log).toEqual(['commit jack', 'release jack', 'drop bob', 'release bob']);
    await checkpoints.close();
  });
});

describe('the snapshots of a cut are committed a few at once', () => {
  /** Staged snapshots as the hooks leave them, each commit held until the test lets it end (or fail). */
  function staging() {
    const snapshots = SnapshotCheckpoint.open({ root: tempDir() } as never);
    const log: string[] = [];
    const ends = new Map<string, { ok: () => void; fail: (error: Error) => void }>();
    const stage = (user: string) => {
      const commit = () =>
        new Promise<void>((ok, fail) => {
          log.push(`commit ${user}`);
          ends.set(user, { ok, fail });
        });
      const held = { user, lock: { release: () => log.push(`release ${user}`) }, staged: { commit, drop: async () => void log.push(`drop ${user}`), close: async () => undefined } };
      const inner = snapshots as unknown as { held: Map<string, unknown>; staged: Set<unknown> };
      inner.held.set(user, held);
      inner.staged.add(held);
    };
    return { snapshots, log, ends, stage };
  }
  const started = (log: string[]) => log.filter((l) => l.startsWith('commit')).length;
  const tick = () => new Promise((resolve) => setImmediate(resolve));

  it('four at once (each waits on its flushes), every one committed and released', async () => {
    const { snapshots, log, ends, stage } = staging();
    const users = Array.from({ length: 10 }, (_, i) => `u${i}`);
    users.forEach(stage);
    const committing = snapshots.commit();
    await tick();
    expect(started(log)).toBe(4);
    for (let done = 0; done < users.length; done++) {
      ends.get(users[done]!)!.ok();
      await tick();
    }
    await committing;
    expect(started(log)).toBe(10);
    expect(users.every((u) => log.includes(`release ${u}`))).toBe(true);
    expect(snapshots.pending).toBe(false);
  });

  it('the first that fails ends the commit: no other starts, and what was not committed is dropped', async () => {
    const { snapshots, log, ends, stage } = staging();
    const users = Array.from({ length: 10 }, (_, i) => `u${i}`);
    users.forEach(stage);
    const checkpoints = new Checkpoints();
    checkpoints.add(snapshots);
    const committing = checkpoints.commit();
    await tick();
    ends.get('u0')!.ok();
    await tick();
    ends.get('u2')!.fail(Object.assign(new Error('no space'), { code: 'ENOSPC' }));
    for (const user of ['u1', 'u3', 'u4']) ends.get(user)!.ok();
    await committing;
    expect(checkpoints.failure?.message).toMatch(/cannot store the snapshot of u2 in .*: the disk is full \(ENOSPC\)/);
    expect(started(log)).toBe(5);
    for (const user of ['u0', 'u1', 'u3', 'u4']) expect(log).toContain(`release ${user}`);
    for (const user of ['u2', ...users.slice(5)]) expect(log).toContain(`drop ${user}`);
    await checkpoints.close();
  });
});

describe('a commit that fails keeps nothing from then on, and says whose results it dropped', () => {
  it('the snapshots of the cut not committed and every snapshot staged are lost users for the resume; a user in flight ends with the store\'s line', async () => {
    const root = tempDir();
    const snapshots = SnapshotCheckpoint.open(new SnapshotStore(root, { pid: process.pid, lock: async () => ({ release: () => undefined }) }, 'sandbox'));
    const log: string[] = [];
    const inner = snapshots as unknown as { held: Map<string, unknown>; staged: Set<unknown> };
    const full = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', syscall: 'write' });
    const stage = (user: string, fails = false) => {
      const commit = async () => {
        if (fails) throw full;
        log.push(`commit ${user}`);
      };
      const held = { user, lock: { release: () => log.push(`release ${user}`) }, staged: { commit, drop: async () => void log.push(`drop ${user}`), close: async () => undefined } };
      inner.held.set(user, held);
      inner.staged.add(held);
    };
    const checkpoints = new Checkpoints();
    checkpoints.add(snapshots);
    stage('jack');
    stage('bob', true);
    stage('ann');
    expect(checkpoints.takeLost()).toBeUndefined();
    await checkpoints.commit();
    expect(checkpoints.failure?.message).toBe(`cannot store the snapshot of bob in ${root}: the disk is full (ENOSPC)`);
    // Committed a few at once: ann's commit was under way beside bob's, and is kept.
    expect(log).toEqual(['commit jack', 'commit ann', 'release jack', 'release ann', 'drop bob', 'release bob']);
    expect(checkpoints.takeLost()).toEqual(['bob']);
    // Asked again: nothing new was dropped.
    expect(checkpoints.takeLost()).toEqual([]);
    // A user whose export was under way when its lock went with the rest: its end says why it was not kept.
    const hooks = snapshots.hooks({ profile: 'default', route: 'graph/get_followers', how: 'username', user: 'eve' }, NIGHT, false);
    const end = { credits: 0, emit: async () => undefined, reporter: { warn: () => undefined } as never };
    await expect(hooks.onEnd!(end)).rejects.toMatchObject({ message: `cannot store its snapshot in ${root}: the disk is full (ENOSPC)`, code: 'ENOSPC' });
    await checkpoints.close();
  });

  it('a checkpoint before the snapshots that fails to commit (the dataset) loses the snapshots staged too', async () => {
    const snapshots = SnapshotCheckpoint.open(new SnapshotStore(tempDir(), { pid: process.pid, lock: async () => ({ release: () => undefined }) }, 'sandbox'));
    const inner = snapshots as unknown as { held: Map<string, unknown>; staged: Set<unknown> };
    for (const user of ['jack', 'bob']) {
      const held = { user, lock: { release: () => undefined }, staged: { commit: async () => undefined, drop: async () => undefined, close: async () => undefined } };
      inner.held.set(user, held);
      inner.staged.add(held);
    }
    const dataset: Checkpoint = {
      what: 'the dataset',
      pending: true,
      due: true,
      cut: () => async () => {
        throw new Error('cannot write the dataset: ENOSPC');
      },
      drop: async () => undefined,
      close: async () => undefined,
    };
    const checkpoints = new Checkpoints();
    checkpoints.add(dataset);
    checkpoints.add(snapshots);
    await checkpoints.commit();
    expect(checkpoints.takeLost()).toEqual(['jack', 'bob']);
    await checkpoints.close();
  });
});

describe('the cadence of commits while output streams', () => {
  it('a commit being written is not joined by another: nothing is due until it is written, then what was staged meanwhile is', async () => {
    const checkpoints = new Checkpoints();
    const first = gated();
    checkpoints.add(first.checkpoint);
    first.checkpoint.stage();
    expect(checkpoints.due).toBe(true);
    const committing = checkpoints.commit();
    // A job ends while the commit is written: it stages, and must not cut a commit to wait behind this one.
    first.checkpoint.stage();
    expect(checkpoints.pending).toBe(true);
    expect(checkpoints.due).toBe(false);
    first.open();
    await committing;
    expect(checkpoints.due).toBe(true);
    await checkpoints.commit();
    expect(checkpoints.pending).toBe(false);
    await checkpoints.close();
  });
});
