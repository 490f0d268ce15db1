import { accessSync, constants, existsSync, readdirSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, join, relative, resolve, isAbsolute } from 'node:path';
import { randomBytes } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { createGzip } from 'node:zlib';
import { closeTemp, createTemp, moveFolder, moveIntoPlace, replaceFile, replaceFileAsync, sealTempAsync, syncFolder, writerTo } from '../../fs/atomic.js';
import { PRIVATE_FILE, makePrivateFolder } from '../../fs/modes.js';
import { readRegularFile } from '../../fs/read.js';
import { sweepLeftovers } from '../../fs/sweep.js';
import type { Env } from '../config.js';
import type { Keyed } from '../records/keyed.js';
import { LineBytes } from '../records/line-bytes.js';
import { withLock, type LockOwner } from './store-lock.js';
import { routeFolderName } from '../routes.js';
import { pathSegment as segment, serviceFolder } from '../service.js';
import { removeFile } from '../../fs/remove.js';
import { metaNames, readHint, writeHint } from './last-committed.js';

// The snapshot store: one folder per profile, route, how and user, holding gzip NDJSON
// files sorted by the field that identifies an account (`sorted_by`: an id from sgq 2.3 on,
// the username before; so that two of them diff in one streaming pass) and a small
// JSON file of metadata beside each. The metadata file is written last and commits the
// snapshot: a data file without one (a crash in between) is never listed or diffed.
// Both are replaced through src/fs/atomic.ts and readable by their owner only. A metadata
// file is data sgq reads back: the data file it names must be a plain name in its own folder,
// or the snapshot is skipped with a warning, so a damaged or planted `"file": "../../x"` can
// never make a prune delete, or a diff read, anything outside the store.

/**
 * What a snapshot's `sorted_by` field is: an account id, the username, the field --key named,
 * or nothing (no records). Absent in the snapshots of sgq before 2.3, which were sorted by
 * `username` and left out every record without one.
 */
export type SnapshotIdentity = 'id' | 'username' | 'key' | 'none';

export interface SnapshotSubject {
  profile: string;
  route: string;
  how: string;
  user: string;
}

export interface SnapshotMeta extends SnapshotSubject {
  version: 1;
  /** When the export started (ISO 8601, UTC). */
  taken_at: string;
  /** The last page had no next_page. */
  complete: boolean;
  pages: number;
  records: number;
  credits_used: number;
  sorted_by: string;
  /** What `sorted_by` is (sgq 2.3 on). */
  identity?: SnapshotIdentity;
  /** The data file, in the same folder. */
  file: string;
  /**
   * The order in which the snapshots of a folder were committed (1, 2, …; none before sgq
   * 2.2, which sorts first). History follows it, not `taken_at`: a clock that was ahead
   * would otherwise put a snapshot after the ones taken later.
   */
  seq?: number;
  /**
   * Who came and went since the snapshot before it, kept when it commits (since `sgq history` came) or
   * counted once afterwards by `sgq history`; absent when not counted (yet).
   */
  counts?: SnapshotCounts;
  /**
   * A night between whole ones of `--full-every` (full-every.ts): the snapshot before it plus
   * what came since `since`; who left is not known. Absent on a whole snapshot.
   */
  partial?: true;
  /** The `since` a partial snapshot's list was asked with: the start of the run before it. */
  since?: string;
}

/** A snapshot's changes since the one before it: null where there is none to compare with (a user's first snapshot). */
export interface SnapshotCounts {
  /** The data file of the snapshot these are against; null for a user's first snapshot. */
  previous: string | null;
  gained: number | null;
  lost: number | null;
  /** Same id, another username (matched by id); 0 when matched by username. */
  renamed: number | null;
}

/**
 * A snapshot of sgq before 2.3 with no records: sgq then left out every record without
 * `username`, so a list of the service's prefixed records was stored empty. Compared with
 * a list that has records, it would call every account gained.
 */
export const unreadable = (meta: SnapshotMeta): boolean => meta.identity === undefined && meta.records === 0;

export interface StoredSnapshot {
  meta: SnapshotMeta;
  dataPath: string;
  metaPath: string;
}

/** A snapshot with its data file open: a prune that removes it later does not cut a reader short. */
export interface OpenSnapshot extends StoredSnapshot {
  handle: FileHandle;
}

/** `$XDG_DATA_HOME/sgq/snapshots`, or `~/.local/share/sgq/snapshots`. */
export function defaultSnapshotRoot(env: Env): string {
  return join(env.XDG_DATA_HOME || join(env.HOME || homedir(), '.local', 'share'), 'sgq', 'snapshots');
}


/** Commit order first (`seq`); among snapshots of sgq before 2.2, which have none, the time they were taken. */
const byOrder = (a: StoredSnapshot, b: StoredSnapshot): number =>
  (a.meta.seq ?? 0) - (b.meta.seq ?? 0) ||
  (a.meta.taken_at < b.meta.taken_at ? -1 : a.meta.taken_at > b.meta.taken_at ? 1 : a.meta.file < b.meta.file ? -1 : a.meta.file > b.meta.file ? 1 : 0);

export class SnapshotStore {
  /** Metadata files already warned about, so a bad one is named once per run. */
  private readonly warned = new Set<string>();
  /** The folder of the service's snapshots (service.ts): profile, route, how and user below it. */
  readonly base: string;

  constructor(
    readonly root: string,
    readonly owner: LockOwner,
    /** The service whose snapshots these are; the store sees no other service's. */
    readonly service: string,
  ) {
    this.base = serviceFolder(root, service);
  }

  /**
   * Takes over the snapshots sgq 3.x kept for `profile` (in root/PROFILE, no service) as this
   * service's, once: the profile's folder is renamed into the service's folder, or, where this
   * service already has snapshots of that profile, each user's folder it lacks. A run of sgq
   * 3.x writing there at that moment finds its folder gone and fails; nothing is lost.
   */
  adoptLegacy(profile: string): void {
    const legacy = join(this.root, segment(profile));
    if (!existsSync(legacy)) return;
    makePrivateFolder(this.base);
    if (tryMove(legacy, join(this.base, segment(profile)))) return;
    for (const folder of foldersBelow(legacy, 3)) {
      const target = join(this.base, segment(profile), relative(legacy, folder));
      if (existsSync(target)) continue;
      makePrivateFolder(join(target, '..'));
      tryMove(folder, target);
    }
  }

  private readonly skip = (metaPath: string, why: string): void => {
    if (this.warned.has(metaPath)) return;
    this.warned.add(metaPath);
    this.owner.warn?.(`skipped the snapshot ${metaPath}: ${why}; delete it if it is not yours`);
  };

  folder(subject: SnapshotSubject): string {
    return join(this.base, segment(subject.profile), segment(routeFolderName(subject.route)), segment(subject.how), segment(subject.user));
  }

  /** The committed snapshots of one subject, oldest first. */
  history(subject: SnapshotSubject): StoredSnapshot[] {
    return readFolder(this.folder(subject), this.skip);
  }

  /** Every committed snapshot in the store, grouped by subject, oldest first within each. */
  list(): StoredSnapshot[] {
    const out: StoredSnapshot[] = [];
    for (const folder of this.folders()) out.push(...readFolder(folder, this.skip));
    return out;
  }

  /**
   * Takes the subject's lock and makes sure its folder can be written, before anything is
   * fetched for it. The lock is held through the whole read-compare-commit: a second run on
   * the same user waits, then compares against this run's snapshot, never the same previous one.
   */
  async lockSubject(subject: SnapshotSubject): Promise<{ release(): void }> {
    const folder = this.folder(subject);
    makePrivateFolder(folder);
    accessSync(folder, constants.W_OK);
    return this.owner.lock(join(folder, '.store'));
  }

  /**
   * Stages a snapshot (the caller holds the subject's lock): the data goes to a temporary
   * file in the subject's folder, flushed to disk, and is open for a diff against the
   * previous snapshot. Nobody sees it until `commit()`, which moves it into place and writes
   * its metadata last; `drop()` removes it.
   */
  async stage(subject: SnapshotSubject, sorted: AsyncIterable<Keyed[] | LineBytes>, meta: Omit<SnapshotMeta, 'version' | 'file' | 'records' | keyof SnapshotSubject>): Promise<StagedSnapshot> {
    const folder = this.folder(subject);
    // One listing under the lock serves the sweep, the last committed and the hint the commit
    // leaves (a year kept is 731 names, listed four times a night before 5.3.10).
    const names = namesIn(folder);
    // What a killed run staged here (a whole export, flushed) goes before this one is written.
    sweepLeftovers(folder, undefined, { names });
    // Named before it is written, so the data goes straight to the temporary file that will replace it.
    const base = `${meta.taken_at.replaceAll(':', '-')}-${randomBytes(3).toString('hex')}`;
    const dataPath = join(folder, `${base}.ndjson.gz`);
    const temp = createTemp(dataPath, PRIVATE_FILE);
    try {
      let records: number;
      try {
        records = await writeSorted(sorted, temp.fd);
        await sealTempAsync(temp.fd);
      } finally {
        // The one close of this descriptor: the stream that wrote to it never closes it.
        closeTemp(temp);
      }
      // The last one committed, whatever the clocks said: this one is compared with it and follows it.
      const { last: previous, ...before } = this.lastCommitted(folder, names);
      if (previous && previous.meta.taken_at > meta.taken_at) {
        this.owner.warn?.(`${subject.user}: the previous snapshot says it was taken at ${previous.meta.taken_at}, after this run's start (${meta.taken_at}): a clock was ahead; the changes are against it all the same`);
      }
      const seq = (previous?.meta.seq ?? 0) + 1;
      const full: SnapshotMeta = { version: 1, ...subject, ...meta, records, file: basename(dataPath), seq };
      const current: OpenSnapshot = { meta: full, dataPath: temp.path, metaPath: join(folder, `${base}.json`), handle: await open(temp.path, 'r') };
      return new StagedSnapshot(current, previous && { ...previous, handle: await open(previous.dataPath, 'r') }, dataPath, before);
    } catch (error) {
      removeFile(temp.path);
      throw error;
    }
  }

  /**
   * The last snapshot committed in a folder of these `names` (the caller holds its lock), and
   * what the next hint is written over: by the folder's hint while it holds, else by reading
   * every metadata file (a hint of sgq before 5.3.9, which keeps no order, is read past once).
   */
  private lastCommitted(folder: string, names: readonly string[]): { last?: StoredSnapshot } & FolderBefore {
    const metas = metaNames(names);
    const hint = readHint(folder, metas);
    const hinted = hint?.order && readMeta(folder, hint.meta, this.skip);
    if (hint && hinted && (hinted.meta.seq ?? 0) === hint.seq) return { last: hinted, metas, order: hint.order };
    const all = snapshotsIn(folder, names, this.skip);
    return { last: all.at(-1), metas, order: all.map((s) => basename(s.metaPath)) };
  }

  /**
   * The newest committed snapshots of a subject, oldest first, as few as `enough` accepts,
   * read newest first in the order the folder's hint keeps (last-committed.ts): a user keeping
   * a year of snapshots is not read whole every night. The whole history, as history() reads
   * it, when there is no such hint or `enough` takes it all.
   */
  newest(subject: SnapshotSubject, enough: (tail: readonly StoredSnapshot[]) => boolean): StoredSnapshot[] {
    const folder = this.folder(subject);
    const names = namesIn(folder);
    const order = readHint(folder, metaNames(names))?.order;
    return (order && newestInOrder(order, (name) => readMeta(folder, name, this.skip), enough)) || snapshotsIn(folder, names, this.skip);
  }

  /** Stores a snapshot at once: lock, stage, commit (for callers with no output to wait for). */
  async commit(subject: SnapshotSubject, sorted: AsyncIterable<Keyed[]>, meta: Omit<SnapshotMeta, 'version' | 'file' | 'records' | keyof SnapshotSubject>): Promise<{ current: OpenSnapshot; previous?: OpenSnapshot }> {
    const lock = await this.lockSubject(subject);
    try {
      const staged = await this.stage(subject, sorted, meta);
      try {
        await staged.commit();
      } catch (error) {
        await staged.drop();
        throw error;
      }
      return { current: { ...staged.current, dataPath: staged.finalPath }, previous: staged.previous };
    } finally {
      lock.release();
    }
  }

  /** Opens snapshots of a subject chosen from its history, under the lock. */
  async openFrom(subject: SnapshotSubject, choose: (history: StoredSnapshot[]) => StoredSnapshot[]): Promise<OpenSnapshot[]> {
    const folder = this.folder(subject);
    if (!existsSync(folder)) return [];
    return withLock(join(folder, '.store'), this.owner, async () => {
      const chosen = choose(readFolder(folder, this.skip));
      const opened: OpenSnapshot[] = [];
      for (const s of chosen) opened.push({ ...s, handle: await open(s.dataPath, 'r') });
      return opened;
    });
  }

  /**
   * The history of a subject with every snapshot counted that can be: those kept without
   * counts (taken by an older sgq) are counted once, each against the one before it, under
   * the subject's lock, and their counts kept in their metadata (each replaced through the
   * commit rule: a crash leaves the metadata before or after, both a whole snapshot). The
   * oldest kept snapshot is counted only when it is the user's first (`seq` 1): the one before
   * it was pruned otherwise, and it stays uncounted.
   */
  async countHistory(subject: SnapshotSubject, count: (previous: OpenSnapshot | undefined, current: OpenSnapshot) => Promise<SnapshotCounts | undefined>): Promise<StoredSnapshot[]> {
    const folder = this.folder(subject);
    const history = readFolder(folder, this.skip);
    if (!history.some(uncounted)) return history;
    return withLock(join(folder, '.store'), this.owner, async () => {
      const current = readFolder(folder, this.skip);
      try {
        for (let i = 0; i < current.length; i++) {
          const s = current[i]!;
          if (!uncounted(s, i)) continue;
          const counts = await withOpen(i === 0 ? [s] : [current[i - 1]!, s], (open) => count(open.length === 2 ? open[0] : undefined, open.at(-1)!));
          if (!counts) continue;
          s.meta = { ...s.meta, counts };
          // Kept as it is counted (a run stopped half-way keeps what it counted); the folder is flushed once, below.
          replaceFile(s.metaPath, `${JSON.stringify(s.meta, null, 2)}\n`, { flushFolder: false });
        }
      } finally {
        syncFolder(folder);
      }
      return current;
    });
  }

  /**
   * Keeps the newest `keep` snapshots of each subject (of the given users, or all), and
   * removes what a crash left behind: data files never committed, temporary files of
   * processes that are gone. Returns how many snapshots it removed.
   */
  async prune(keep: number, users?: ReadonlySet<string>): Promise<number> {
    let removed = 0;
    // A user's snapshots live in a folder named for the user (folder()): the others' are not read.
    const named = users && new Set([...users].map((user) => segment(user)));
    for (const folder of this.folders()) {
      if (named && !named.has(basename(folder))) continue;
      removed += await withLock(join(folder, '.store'), this.owner, async () => {
        // One listing under the lock serves the whole prune: no other run changes the folder.
        const names = namesIn(folder);
        const current = snapshotsIn(folder, names, this.skip);
        const old = current.slice(0, Math.max(0, current.length - keep));
        // The metadata first: without it the snapshot no longer exists for anyone.
        for (const s of old) removeFile(s.metaPath);
        for (const s of old) removeFile(s.dataPath);
        const kept = new Set(current.slice(old.length).map((s) => s.meta.file));
        const gone = new Set(old.flatMap((s) => [s.meta.file, basename(s.metaPath)]));
        sweepLeftovers(folder, undefined, { names });
        // Data files no metadata names (a crash between the two): no snapshot, never diffed.
        for (const name of names) {
          if (name.endsWith('.ndjson.gz') && !name.startsWith('.') && !kept.has(name) && !gone.has(name)) removeFile(join(folder, name));
        }
        // Every file was read under the lock: the last is known, and the next run need not read them again.
        const last = current.at(-1);
        if (old.length > 0 && last && kept.has(last.meta.file)) {
          const order = current.slice(old.length).map((s) => basename(s.metaPath));
          writeHint(folder, { meta: basename(last.metaPath), seq: last.meta.seq ?? 0 }, metaNames(names).filter((name) => !gone.has(name)), order);
        }
        return old.length;
      });
    }
    return removed;
  }

  private folders(): string[] {
    return foldersBelow(this.base, 4);
  }
}

/** A snapshot without counts that can be counted: it has a snapshot before it, or is the user's first. */
function uncounted(s: StoredSnapshot, index: number): boolean {
  return s.meta.counts === undefined && (index > 0 || s.meta.seq === 1);
}

/** Runs `step` with the snapshots' data files open, and closes them after. */
async function withOpen<T>(snapshots: readonly StoredSnapshot[], step: (open: OpenSnapshot[]) => Promise<T>): Promise<T> {
  const opened: OpenSnapshot[] = [];
  try {
    for (const s of snapshots) opened.push({ ...s, handle: await open(s.dataPath, 'r') });
    return await step(opened);
  } finally {
    await Promise.all(opened.map((s) => s.handle.close()));
  }
}

/** The folders `depth` levels below `dir`, sorted. */
function foldersBelow(dir: string, depth: number): string[] {
  let level = [dir];
  for (let d = 0; d < depth; d++) level = level.flatMap((at) => subfolders(at));
  return level;
}

/** Moves a folder where nothing is yet; false when the target is there or the folder went meanwhile. */
function tryMove(folder: string, target: string): boolean {
  try {
    moveFolder(folder, target);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTEMPTY' || code === 'EEXIST') return false;
    throw error;
  }
}

function subfolders(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => join(dir, d.name))
      .sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

/**
 * The shortest run of the newest snapshots, in `order` (metadata names, oldest first), that
 * `enough` accepts, each read by `read`; all of them when none is enough. Undefined when one
 * cannot be read or their seq do not fall newest to oldest (an older sgq's, one edited by
 * hand): the caller reads the folder whole then.
 */
export function newestInOrder(order: readonly string[], read: (name: string) => StoredSnapshot | undefined, enough: (tail: readonly StoredSnapshot[]) => boolean): StoredSnapshot[] | undefined {
  const tail: StoredSnapshot[] = [];
  for (let i = order.length - 1; i >= 0; i--) {
    const s = read(order[i]!);
    if (!s || (tail.length > 0 && (s.meta.seq ?? 0) >= (tail[0]!.meta.seq ?? 0))) return undefined;
    tail.unshift(s);
    if (enough(tail)) return tail;
  }
  return tail;
}

function readFolder(folder: string, skip: (metaPath: string, why: string) => void): StoredSnapshot[] {
  return snapshotsIn(folder, namesIn(folder), skip);
}

/** The names in a folder; none when it does not exist. */
function namesIn(folder: string): string[] {
  try {
    return readdirSync(folder);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

/** The committed snapshots among a folder's `names`, oldest first. */
function snapshotsIn(folder: string, names: readonly string[], skip: (metaPath: string, why: string) => void): StoredSnapshot[] {
  const out: StoredSnapshot[] = [];
  for (const name of names) {
    if (name.startsWith('.') || !name.endsWith('.json')) continue;
    const snapshot = readMeta(folder, name, skip);
    if (snapshot) out.push(snapshot);
  }
  return out.sort(byOrder);
}

/** The snapshot a metadata file commits, or undefined when it is gone, not ours, or its data file is missing. */
function readMeta(folder: string, name: string, skip: (metaPath: string, why: string) => void): StoredSnapshot | undefined {
  const metaPath = join(folder, name);
  let meta: SnapshotMeta;
  try {
    meta = JSON.parse(readRegularFile(metaPath, 'utf8')) as SnapshotMeta;
  } catch (error) {
    // Removed by a prune while we looked, or not ours (not JSON, not a file). Any other
    // failure (no descriptor left, an I/O error) must not pass for a snapshot that is not there.
    const code = (error as NodeJS.ErrnoException).code;
    if (code === undefined || code === 'ENOENT' || code === 'ENOTREG' || code === 'EISDIR') return undefined;
    throw error;
  }
  if (meta.version !== 1 || typeof meta.file !== 'string') return undefined;
  const dataPath = dataFileIn(folder, meta.file);
  if (dataPath === undefined) skip(metaPath, `it names the data file ${JSON.stringify(meta.file)}, which is not a file of its own folder`);
  else if (existsSync(dataPath)) return { meta, dataPath, metaPath };
  return undefined;
}

/** The data file a metadata file names, when it is a plain name of a data file in `folder`; undefined for anything that could lead out. */
function dataFileIn(folder: string, file: string): string | undefined {
  if (file !== basename(file) || file.startsWith('.') || !file.endsWith('.ndjson.gz') || file.includes('\\')) return undefined;
  const path = resolve(folder, file);
  const inside = relative(resolve(folder), path);
  return inside === file && !isAbsolute(inside) ? path : undefined;
}

/** A user's folder as the stage found it, under the lock: what the commit's hint is written over. */
interface FolderBefore {
  /** Its metadata files, sorted (metaNames). */
  metas: readonly string[];
  /** The same in the order they were committed, oldest first, when known (last-committed.ts). */
  order?: readonly string[];
}

/** A snapshot written and flushed under a temporary name, not yet visible to anyone. */
export class StagedSnapshot {
  private state: 'staged' | 'committed' | 'dropped' = 'staged';
  private closed = false;

  constructor(
    /** Its data is the temporary file until commit; `meta.file` and `metaPath` are the names it will take. */
    readonly current: OpenSnapshot,
    readonly previous: OpenSnapshot | undefined,
    /** Where the data goes at the commit. */
    readonly finalPath: string,
    /** Its folder before it, as the stage found it. */
    private readonly before: FolderBefore,
  ) {}

  /** Moves the data into place, then writes the metadata, which makes it a snapshot. */
  async commit(): Promise<void> {
    if (this.state !== 'staged') return;
    // The metadata's replace flushes the folder, which makes both renames durable.
    moveIntoPlace(this.current.dataPath, this.finalPath, { durable: false });
    try {
      await replaceFileAsync(this.current.metaPath, `${JSON.stringify(this.current.meta, null, 2)}\n`);
    } catch (error) {
      // Without its metadata the data file is no snapshot: take it back out of sight.
      removeFile(this.finalPath);
      throw error;
    }
    this.state = 'committed';
    // For the next run on this user: which snapshot is the last (last-committed.ts).
    const meta = basename(this.current.metaPath);
    const { metas, order } = this.before;
    writeHint(dirname(this.current.metaPath), { meta, seq: this.current.meta.seq ?? 0 }, [...metas, meta].sort(), order && [...order, meta]);
  }

  /** Forgets it: its output was not kept. */
  async drop(): Promise<void> {
    if (this.state !== 'staged') return;
    this.state = 'dropped';
    removeFile(this.current.dataPath);
  }

  /** Closes its two open files (needed only for the diff); the commit works by name. Safe to call twice. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([this.current.handle.close(), this.previous?.handle.close()]);
  }
}

/**
 * How hard the data files are compressed: gzip's level 6 (its default) cost as much CPU as
 * parsing the records had (8 ms per 1,000 service records on the machine of the bench) for
 * files 14% smaller than level 2's, which takes a third of that.
 */
const GZIP_LEVEL = 2;

/**
 * The gzip stream's pieces out: each is a round trip through libuv's threads (whose callback,
 * on the main thread, wakes on the core the main thread needs) and a write to the file.
 * zlib's 16 KiB made five writes of a 1,000-follower snapshot, 64 KiB two, 128 KiB one.
 */
const GZIP_CHUNK = 128 * 1024;

/**
 * The least a piece in holds (each is a round trip too): LineBytes' pieces (128 KiB, less
 * the room kept for a line) go as they are, smaller ones joined. 64 KiB pieces in made eight
 * round trips of a 1,000-follower snapshot (476 KB of lines), 128 KiB four. Pieces of 256
 * KiB cost no less CPU and raised the nightly job's peak RSS by 5-25 MiB. Bounded: a larger
 * export still streams, a piece at a time.
 */
const GZIP_IN = 64 * 1024;

/** Writes sorted batches as gzip NDJSON to `fd` (which it leaves open, and unused once it returns or throws); returns how many records. */
async function writeSorted(sorted: AsyncIterable<Keyed[] | LineBytes>, fd: number): Promise<number> {
  let records = 0;
  const out = writerTo(fd);
  try {
    await pipeline(
      Readable.from(
        (async function* () {
          for await (const batch of sorted) {
            // Encoded here, once, unless the caller holds its bytes already (an export held in memory, for its diff).
            const bytes = batch instanceof LineBytes ? batch : LineBytes.of(batch);
            records += bytes.count;
            yield* bytes.pieces(GZIP_IN);
          }
        })(),
        // One batch in flight: what waits for gzip is held in memory.
        { highWaterMark: 1 },
      ),
      createGzip({ level: GZIP_LEVEL, chunkSize: GZIP_CHUNK }),
      out,
    );
  } finally {
    // A failed pipeline rejects while its last write may still be running: the caller closes fd after this.
    await out.idle();
  }
  return records;
}
