// The snapshot store locks a subject's folder through a port, so that one lock serves every
// file sgq replaces: the CLI passes the lock of --out and the --since-last state
// (src/fs/lock.ts: the holder's pid, takeover of a dead or silent holder's lock, exit 8).

/** Who works in the store: the CLI passes its pid, its lock and where warnings go (the core does not touch the process). */
export interface LockOwner {
  pid: number;
  /** A line for stderr: a damaged or hostile metadata file that was skipped. */
  warn?: (line: string) => void;
  /** Takes the exclusive lock of `target`, waiting a while for another holder, or throws. */
  lock: (target: string) => Promise<{ release(): void }>;
}

export async function withLock<T>(target: string, owner: LockOwner, fn: () => Promise<T>): Promise<T> {
  const held = await owner.lock(target);
  try {
    return await fn();
  } finally {
    held.release();
  }
}
