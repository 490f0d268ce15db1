import { statSync } from 'node:fs';
import { join } from 'node:path';
import { processAlive } from './owner.js';
import { listing } from './read.js';
import { hostTag, tempOwners } from './temp-names.js';
import { removeFile } from './remove.js';

// Removing the temporary files of runs that were killed (kill -9, a power cut) before they
// could rename or remove them. Called by a lock's holder, so no live run of this host is
// writing them: a file whose pid is gone here is a leftover. A file of another host (a
// container sharing the folder) cannot be checked by pid: it is a leftover once it has not
// been written for the stale period of locks, as a lock of that host would be.

/** How long a file or lock of another host must sit untouched to count as abandoned. */
export const STALE_MS = 60_000;

export interface SweepOptions {
  now?: number;
  /**
   * Only this host's files whose pid is dead: for a folder several runs share with no lock
   * held (a dataset's staging), where another host's file may be live however long it sits.
   */
  ownHostOnly?: boolean;
  /** The folder's names when the caller has just listed it (under the lock that keeps others out). */
  names?: readonly string[];
}

/**
 * Removes from `folder` the temporary files of dead runs: those standing for the file named
 * `base`, or every temporary file of sgq's when `base` is undefined (a folder sgq owns).
 */
export function sweepLeftovers(folder: string, base?: string, { now = Date.now(), ownHostOnly = false, names = listing(folder) }: SweepOptions = {}): void {
  const ownerOf = tempOwners(base);
  for (const name of names) {
    const owner = ownerOf(name);
    if (!owner || (ownHostOnly && owner.host !== hostTag())) continue;
    if (abandoned(join(folder, name), owner, now)) removeFile(join(folder, name));
  }
}

function abandoned(path: string, owner: { pid: number; host?: string }, now: number): boolean {
  if (owner.host === undefined || owner.host === hostTag()) return !processAlive(owner.pid);
  try {
    return Math.abs(now - statSync(path).mtimeMs) > STALE_MS;
  } catch {
    return false;
  }
}

/** Removes the files of `folder` last written before `before` (ms since the epoch): a cache's entries nobody wrote again. */
export function removeFilesOlderThan(folder: string, before: number): void {
  for (const name of listing(folder)) {
    try {
      const file = join(folder, name);
      if (statSync(file).mtimeMs < before) removeFile(file);
    } catch {
      // Removed meanwhile by another run: nothing to do.
    }
  }
}
