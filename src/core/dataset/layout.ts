import { lstatSync, readlinkSync, symlinkSync } from 'node:fs';
import { platform } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { moveIntoPlace } from '../../fs/atomic.js';
import { makeFolder, sharedModes, type FolderModes } from '../../fs/modes.js';
import { listing } from '../../fs/read.js';
import { tempPath } from '../../fs/temp-names.js';
import { removeFile } from '../../fs/remove.js';

// The dataset's layout on disk. Readers glob DIR/records/**/*.parquet (and DIR/changes/...),
// which is a symbolic link to one immutable-by-name version folder:
//
//   DIR/records -> .sgq/records/v3
//   DIR/.sgq/records/v3/route=graph.get_followers/date=2025-01-31/<run id>.parquet
//   DIR/.sgq/staging/.<run id>.parquet.sgq-PID-RAND-HOST.tmp   (parts being written)
//   DIR/.sgq/commit.lock, DIR/.sgq/compact.lock
//
// A run adds a file to the current version with one rename. Compaction builds the next
// version beside it (hard links of every file it keeps, the merged files) and swaps the link
// with one rename: a reader lists the old version or the new one, never both or neither.
// Nothing a reader globs is ever a temporary file: parts are written under .sgq/staging.
//
// What sgq adds is its owner's alone (files 0600, folders 0700), unless the user opened the
// dataset's folder to a group or to others (`chmod 750 DIR` for Spark or a sync running as
// another user): new files and folders then share that access (src/fs/modes.ts, sharedModes).

export type Kind = 'records' | 'changes';

/** How long a run or a compaction waits for the commit lock: held only for renames (a run's parts, a compaction's swap). */
export const COMMIT_WAIT_MS = 120_000;
export const KINDS: readonly Kind[] = ['records', 'changes'];

/** A partition folder's path segments: `route=graph.get_followers`, `date=2025-01-31`. */
export const routeSegment = (route: string): string => `route=${route}`;
export const dateSegment = (date: string): string => `date=${date}`;

export class DatasetLayout {
  readonly root: string;
  private shared?: FolderModes;

  constructor(dir: string) {
    this.root = resolve(dir);
  }

  /** The modes of the files and folders sgq adds: as the root's access says, read once (a missing root is created private). */
  get modes(): FolderModes {
    this.shared ??= sharedModes(this.root);
    return this.shared;
  }

  /** Creates `folder` (the root, and folders below it) and its missing parents with the dataset's folder mode. */
  makeFolder(folder: string): void {
    makeFolder(folder, this.modes.folder);
  }

  get meta(): string {
    return join(this.root, '.sgq');
  }

  get staging(): string {
    return join(this.meta, 'staging');
  }

  /** Held by a run while it renames its parts into place, and by compaction while it swaps versions. */
  get commitLock(): string {
    return join(this.meta, 'commit');
  }

  /** Held by a compaction from start to end: one at a time. */
  get compactLock(): string {
    return join(this.meta, 'compact');
  }

  /** What readers glob: the link to the current version. */
  visible(kind: Kind): string {
    return join(this.root, kind);
  }

  versions(kind: Kind): string {
    return join(this.meta, kind);
  }

  /** The folder of the current version, or undefined before the first file of this kind. */
  current(kind: Kind): string | undefined {
    const link = this.visible(kind);
    let stat;
    try {
      stat = lstatSync(link);
    } catch {
      return undefined;
    }
    if (stat.isDirectory()) return link;
    if (!stat.isSymbolicLink()) throw new Error(`${link} is neither the link sgq keeps there nor a folder`);
    return resolve(this.root, readlinkSync(link));
  }

  /** The version numbers kept, oldest first. */
  versionNumbers(kind: Kind): number[] {
    return listing(this.versions(kind))
      .map((name) => /^v(\d+)$/.exec(name)?.[1])
      .filter((n): n is string => n !== undefined)
      .map(Number)
      .sort((a, b) => a - b);
  }

  /** Makes `kind` exist (version 1 and its link); called with the commit lock held. */
  ensure(kind: Kind): string {
    const current = this.current(kind);
    if (current !== undefined) return current;
    const first = join(this.versions(kind), 'v1');
    this.makeFolder(first);
    this.point(kind, first);
    return first;
  }

  /** Points the link at `version` with one rename (a new link replaces the old atomically). */
  point(kind: Kind, version: string): void {
    const link = this.visible(kind);
    const temp = tempPath(link);
    // Relative, so the dataset folder can be moved or copied whole; Windows makes a junction, which needs an absolute path.
    if (platform() === 'win32') symlinkSync(version, temp, 'junction');
    else symlinkSync(join('.sgq', kind, basename(version)), temp);
    try {
      moveIntoPlace(temp, link);
    } catch (error) {
      removeFile(temp);
      throw error;
    }
  }
}

/** A run's id: its start in UTC, sortable, and 8 random hex digits so that two runs of the same instant differ. */
export function runId(startedAt: Date): string {
  const stamp = startedAt.toISOString().replace(/[-:]/g, '').replace('.', '');
  return `${stamp}-${Math.floor(Math.random() * 0x1_0000_0000).toString(16).padStart(8, '0')}`;
}

/** The name of a run's n-th part: `<run id>.parquet`, then `<run id>-2.parquet`, … */
export const partName = (id: string, n: number): string => (n === 1 ? `${id}.parquet` : `${id}-${n}.parquet`);
