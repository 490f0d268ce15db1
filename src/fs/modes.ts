import { fchmodSync, fchownSync, mkdirSync, type Stats } from 'node:fs';

// What sgq creates holding data (records, snapshots, marks, cache entries), a key or a trace
// is readable by its owner only, and stays so when it replaces a file that was not. The one
// exception is --out into an existing file, which keeps that file's mode (the README promises
// it): its temporary file and FILE.partial get that mode, never more readable than FILE.

/** A file of data, a key or a trace. */
export const PRIVATE_FILE = 0o600;
/** A folder sgq creates for such files. */
export const PRIVATE_FOLDER = 0o700;
/** A lock file: it holds only a pid and a host name, which any user may read to see who holds it. */
export const LOCK_FILE = 0o644;

/** The permission bits of an existing file. */
export const modeOf = (stat: Stats): number => stat.mode & 0o7777;

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
  mkdirSync(folder, { recursive: true, mode: PRIVATE_FOLDER });
}
