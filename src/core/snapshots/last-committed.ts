import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { replaceFile } from '../../fs/atomic.js';
import { readRegularFile } from '../../fs/read.js';

// Which metadata file of a user's folder is the last committed, without reading them all.
// Every run on a user compares with the last snapshot committed; finding it by reading each
// metadata file made a nightly run slower with every night kept (a year of them: 500 accounts
// took 24-31 s instead of 18-21). The commit leaves a hint in the folder (`.last-snapshot`): the
// name and seq of the metadata file it wrote, and a digest of the folder's metadata file
// names at that moment (a prune, which reads them all under the lock, writes it too). The hint
// is believed only while the folder holds exactly those names: any other change (a run of an
// older sgq, a file removed by hand, a crash between the metadata and the hint) and the caller
// reads every file, as before, and the next commit writes it again.
// A hint is a cache, never the truth: not flushed to disk (a hint lost or left behind by a
// crash fails that check), and unreadable or damaged means "read them all".
// Since 5.3.9 the hint also keeps the order of the folder's metadata files (the order they
// were committed in), so that --full-every and --confirm-lost read only the newest few instead
// of a year of them (store.ts, newest()); a hint without it is believed for the last alone.

const HINT = '.last-snapshot';

/**
 * Below this many metadata files a folder is read whole and no hint is kept: reading a few
 * costs what the hint's own read and write do (0.2-0.3 ms a user here), which the nightly
 * job of 2,000 accounts on their second night would otherwise pay for nothing.
 */
export const HINT_FROM = 8;

export interface LastCommitted {
  /** The metadata file's name in the folder. */
  meta: string;
  seq: number;
}

export interface Hint extends LastCommitted {
  /** The folder's snapshots (their metadata files) in the order they were committed, oldest first: absent in hints of sgq before 5.3.9. */
  order?: string[];
}

/** The folder's metadata files (what a snapshot is committed by), sorted: the names the hint's digest covers. */
export const metaNames = (names: readonly string[]): string[] => names.filter((name) => !name.startsWith('.') && name.endsWith('.json')).sort();

const digest = (metas: readonly string[]): string => createHash('sha256').update(metas.join('\n')).digest('hex');

/** The hint, when the folder's metadata files are still those it was written over; otherwise undefined. */
export function readHint(folder: string, metas: readonly string[]): Hint | undefined {
  if (metas.length < HINT_FROM) return undefined;
  let hint: unknown;
  try {
    hint = JSON.parse(readRegularFile(join(folder, HINT), 'utf8'));
  } catch {
    return undefined; // none yet, or damaged: read them all
  }
  if (typeof hint !== 'object' || hint === null) return undefined;
  const { meta, seq, names, order } = hint as Record<string, unknown>;
  if (typeof meta !== 'string' || typeof seq !== 'number' || typeof names !== 'string') return undefined;
  if (names !== digest(metas) || !metas.includes(meta)) return undefined;
  return isOrderOf(order, metas, meta) ? { meta, seq, order } : { meta, seq };
}

/**
 * Whether `order` can be the folder's snapshots in commit order: some of its metadata files
 * `metas` (a .json file that is not a snapshot, planted or damaged, is in none), each once,
 * ending with the last committed.
 */
function isOrderOf(order: unknown, metas: readonly string[], last: string): order is string[] {
  if (!Array.isArray(order) || order.length > metas.length || order.at(-1) !== last) return false;
  const known = new Set(metas);
  return new Set(order).size === order.length && order.every((name) => typeof name === 'string' && known.has(name));
}

/**
 * Leaves the hint over the folder's metadata files `metas` (sorted, as the caller found them
 * under the user's lock), once `last` is known to be the last committed, where they are
 * HINT_FROM or more, with their `order` when the caller knows it and it names them all. A hint
 * over names the folder no longer holds (a file removed by hand meanwhile) is never believed;
 * a hint not written only costs the next run a full read.
 */
export function writeHint(folder: string, last: LastCommitted, metas: readonly string[], order?: readonly string[]): void {
  try {
    if (metas.length < HINT_FROM) return;
    const hint: Hint = { ...last, ...(isOrderOf(order, metas, last.meta) && { order: [...order] }) };
    replaceFile(join(folder, HINT), `${JSON.stringify({ ...hint, names: digest(metas) })}\n`, { durable: false });
  } catch {
    // A full disk or a folder made read-only: the snapshot is committed all the same.
  }
}
