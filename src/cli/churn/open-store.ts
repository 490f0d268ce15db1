import type { ResolvedConfig, Env } from '../../core/config.js';
import { SnapshotStore, defaultSnapshotRoot } from '../../core/churn/store.js';
import { acquireLock } from '../run/file-lock.js';

/** A snapshot run waits this long for another one on the same user before it exits 8. */
const STORE_WAIT_MS = 120_000;

/** Whether a process is running (signal 0 only asks); EPERM means it runs as someone else. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The store: `--snapshot-dir`, else the snapshot-dir setting (or SGQ_SNAPSHOT_DIR), else under XDG_DATA_HOME. */
export function openSnapshotStore(flagDir: string | undefined, config: ResolvedConfig, env: Env): SnapshotStore {
  const lock = (target: string) => acquireLock(target, { waitMs: STORE_WAIT_MS, what: 'the snapshot store' });
  return new SnapshotStore(flagDir ?? config.snapshotDir ?? defaultSnapshotRoot(env), { pid: process.pid, isAlive, lock });
}
