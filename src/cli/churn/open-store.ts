import type { ResolvedConfig, Env } from '../../core/config.js';
import { SnapshotStore, defaultSnapshotRoot } from '../../core/churn/store.js';
import { acquireLock, processAlive, type LockOptions } from '../run/file-lock.js';

/** A snapshot run waits this long for another one on the same user before it exits 8. */
const STORE_WAIT_MS = 120_000;

/** The store: `--snapshot-dir`, else the snapshot-dir setting (or SGQ_SNAPSHOT_DIR), else under XDG_DATA_HOME. */
export function openSnapshotStore(flagDir: string | undefined, config: ResolvedConfig, env: Env, options?: Omit<LockOptions, 'what'>): SnapshotStore {
  // A run holds a user's folder until its output is kept: another waits for it, as --wait-lock says, and at least a while.
  const waitMs = Math.max(STORE_WAIT_MS, options?.waitMs ?? 0);
  const lock = (target: string) => acquireLock(target, { ...options, waitMs, what: 'the snapshot store' });
  return new SnapshotStore(flagDir ?? config.snapshotDir ?? defaultSnapshotRoot(env), { pid: process.pid, isAlive: processAlive, lock });
}
