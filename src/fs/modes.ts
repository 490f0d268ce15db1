import { chmodSync, existsSync, fchmodSync, fchownSync, mkdirSync, statSync, type Stats } from 'node:fs';
import { dirname } from 'node:path';

// What sgq creates holding data (records, snapshots, marks, cache entries), a key or a trace
// is readable by its owner only, and stays so when it replaces a file that was not; the umask
// can narrow none of it further than that, and widen none of it. Two exceptions, both chosen
// by the user: --out into an existing file keeps that file's mode (its temporary file and
// FILE.partial get that mode, never more readable than FILE), and a dataset whose folder the
// user opened to a group or to others shares that access with what sgq adds to it (sharedModes).
// The list of every file sgq writes, with its mode: docs/guarantees.md.

/** A file of data, a key or a trace. */
export const PRIVATE_FILE = 0o600;
/** A folder sgq creates for such files. */
export const PRIVATE_FOLDER = 0o700;
/** A lock file: it holds only a pid and a host name, which any user may read to see who holds it (the umask may narrow it). */
export const LOCK_FILE = 0o644;

/** The modes of the files and folders sgq adds under one folder. */
export interface FolderModes {
  file: number;
  folder: number;
}

export const PRIVATE_MODES: FolderModes = { file: PRIVATE_FILE, folder: PRIVATE_FOLDER };

/** The permission bits of an existing file. */
export const modeOf = (stat: Stats): number => stat.mode & 0o7777;

/**
 * The modes of what sgq adds under `root` (a dataset's folder): its owner's alone, plus the
 * access the root gives its group and others. `chmod 750 DIR` makes new files 0640 and new
 * folders 0750; a root that is missing or private (0700) makes them 0600 and 0700. A setgid
 * root (`chmod g+s`) passes its group on, as the kernel does, and its folders keep that bit.
 */
export function sharedModes(root: string): FolderModes {
  let mode: number;
  try {
    mode = modeOf(statSync(root));
  } catch {
    return PRIVATE_MODES;
  }
  return { file: PRIVATE_FILE | (mode & 0o066), folder: PRIVATE_FOLDER | (mode & 0o2077) };
}

/** Sets `mode` on an open file: the umask may have narrowed it at creation, an existing file may be wider. */
export function setMode(fd: number, mode: number): void {
  fchmodSync(fd, mode);
}

/** root replacing someone else's file must not hand it to root. */
export function keepOwner(fd: number, stat: Stats | undefined): void {
  if (stat && process.getuid?.() === 0 && (stat.uid !== 0 || stat.gid !== 0)) fchownSync(fd, stat.uid, stat.gid);
}

/** Creates `folder` (and its parents) as a private folder; an existing one is left as it is. */
export function makePrivateFolder(folder: string): void {
  makeFolder(folder, PRIVATE_FOLDER);
}

/**
 * Creates `folder` and its missing parents with exactly `mode`, whatever the umask (which
 * narrows mkdir's); the folders that exist are left as they are.
 */
export function makeFolder(folder: string, mode: number): void {
  const first = mkdirTree(folder, mode);
  if (first === undefined) return;
  for (let at = folder; ; at = dirname(at)) {
    chmodSync(at, mode);
    if (at === first || dirname(at) === at) return;
  }
}

/**
 * mkdir -p, returning the first folder it made. Node's recursive mkdir says ENOENT whatever
 * stopped it (a read-only file system, a folder not writable): the first missing folder is
 * then made alone, which throws the real error, so the line that reports it is right.
 */
function mkdirTree(folder: string, mode: number): string | undefined {
  try {
    return mkdirSync(folder, { recursive: true, mode });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    let missing = folder;
    while (dirname(missing) !== missing && !existsSync(dirname(missing))) missing = dirname(missing);
    mkdirSync(missing, { mode });
    // It could be made after all (another process made or removed a folder meanwhile): the rest of the way.
    mkdirSync(folder, { recursive: true, mode });
    return missing;
  }
}
