import type { ResolvedConfig, Env } from '../../core/config.js';
import { SnapshotStore, defaultSnapshotRoot } from '../../core/snapshots/snapshots.js';
import { adoptsLegacyState, type StateOwner } from '../../core/service.js';
import { acquireLock, type LockOptions } from '../../fs/lock.js';
import { visible } from '../terminal/visible.js';

/** Where the snapshots are: `--snapshot-dir`, else the snapshot-dir setting (or SGQ_SNAPSHOT_DIR), else under XDG_DATA_HOME. */
export const snapshotRoot = (flagDir: string | undefined, config: Pick<ResolvedConfig, 'snapshotDir'>, env: Env): string => flagDir ?? config.snapshotDir ?? defaultSnapshotRoot(env);

/** A snapshot run waits this long for another one on the same user before it exits 8. */
const STORE_WAIT_MS = 120_000;

/**
 * The store of `owner`'s service: `--snapshot-dir`, else the snapshot-dir setting (or
 * SGQ_SNAPSHOT_DIR), else under XDG_DATA_HOME. The snapshots sgq 3.x kept for the profile are
 * taken over first by a service other than the sandbox (service.ts).
 */
export function openSnapshotStore(flagDir: string | undefined, config: ResolvedConfig, env: Env, owner: StateOwner, options?: Omit<LockOptions, 'what'> & { warn?: (line: string) => void }): SnapshotStore {
  // A run holds a user's folder until its output is kept: another waits for it, as --wait-lock says, and at least a while.
  const waitMs = Math.max(STORE_WAIT_MS, options?.waitMs ?? 0);
  const { warn: told, ...lockOptions } = options ?? {};
  const lock = (target: string) => acquireLock(target, { ...lockOptions, waitMs, what: 'the snapshot store' });
  // A metadata file naming a data file outside its folder is skipped, and said once on stderr.
  const warn = told ?? ((line: string) => process.stderr.write(`sgq: ${visible(line)}\n`));
  const store = new SnapshotStore(snapshotRoot(flagDir, config, env), { pid: process.pid, lock, warn }, owner.service);
  if (adoptsLegacyState(owner)) store.adoptLegacy(owner.profile);
  return store;
}
