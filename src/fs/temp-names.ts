import { basename, dirname, join } from 'node:path';
import { thisHost } from './owner.js';

// The one scheme for the names of temporary files, beside the file they stand for:
//
//   .NAME.sgq-PID-RANDOM-HOST.tmp
//
// PID and RANDOM make it this run's own (a killed run with the same pid may have left one);
// HOST (a short hash of the host name) says whether the pid can be checked here at all, so a
// sweep removes another host's leftovers by age instead. The name must be unique, not secret:
// every such file is created exclusively (a name taken makes the step fail, never redirects a
// write), so Math.random serves, and a start does not pay some 4 ms for node:crypto.

/** The temporary files sgq makes; the base is the name of the file they stand for. */
const TEMP = /^\.(.+)\.sgq-(\d+)-[0-9a-f]{8}-([0-9a-f]{8})\.tmp$/;

export const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** FNV-1a: a short hash for names (node:crypto would cost a start more than it is worth). */
export function shortHash(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return (hash >>> 0).toString(16).padStart(8, '0');
}

let hostTagMemo: string | undefined;
/** This host in temporary names. */
export function hostTag(): string {
  hostTagMemo ??= shortHash(thisHost());
  return hostTagMemo;
}

/** What makes a name this run's own: the pid and 8 random hex digits. */
export function runTag(): string {
  return `${process.pid}-${Math.floor(Math.random() * 0x1_0000_0000).toString(16).padStart(8, '0')}`;
}

/** A fresh temporary name beside `target`, for this run. */
export function tempPath(target: string): string {
  return join(dirname(target), `.${basename(target)}.sgq-${runTag()}-${hostTag()}.tmp`);
}

/** Who left a temporary file: a pid, and the host tag when the name carries one (a name of sgq 2.1 does not). */
export interface TempOwner {
  pid: number;
  host?: string;
}

/**
 * The owner of `name` when it is a temporary file of sgq's: of the file named `base`, or of
 * any file when `base` is undefined. Names of sgq 2.1 and earlier are recognised too, so an
 * upgrade sweeps what an older version left.
 */
export const tempOwner = (name: string, base?: string): TempOwner | undefined => tempOwners(base)(name);

/**
 * tempOwner for the names of a folder, with `base`'s patterns built once: a sweep of a user's
 * snapshot folder (730 names for a year kept) built three regular expressions a name, some
 * 0.25 s of CPU over a nightly run of 200 such users.
 */
export function tempOwners(base?: string): (name: string) => TempOwner | undefined {
  const legacy = legacyNames(base);
  return (name) => {
    const current = TEMP.exec(name);
    if (current) return base === undefined || current[1] === base ? { pid: Number(current[2]), host: current[3] } : undefined;
    for (const pattern of legacy) {
      const pid = pattern.exec(name)?.[1];
      if (pid !== undefined) return { pid: Number(pid) };
    }
    return undefined;
  };
}

/** sgq 2.1's names: `.F.PID.R.tmp` (--out), `F.PID[.R].tmp` (marks, caches; 1.0 had no R), `F.lock.[stale.]PID.R` (locks), `.tmp-PID-R.*` (snapshots). */
function legacyNames(base: string | undefined): RegExp[] {
  const store = /^\.tmp-(\d+)-[0-9a-f]+\.(?:ndjson\.gz|json|run)$/;
  if (base === undefined) return [store];
  const b = escapeRegExp(base);
  return [new RegExp(`^\\.${b}\\.(\\d+)\\.[0-9a-f]+\\.tmp$`), new RegExp(`^${b}\\.(\\d+)(?:\\.[0-9a-f]+)?\\.tmp$`), new RegExp(`^${b}\\.(?:stale\\.)?(\\d+)\\.[0-9a-f]+$`)];
}
