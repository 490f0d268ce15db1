import { getHeapStatistics } from 'node:v8';
import { isMainThread, resourceLimits } from 'node:worker_threads';

// The room sgq's in-memory bounds (a sort's run, a diff's partition, a run's snapshot
// captures) are fractions of: V8's old generation, where what a process holds lives and
// where a capped heap runs out. V8's heap_size_limit counts the young generation too, which
// is most of it under a cap: `--max-old-space-size=32` read 80 MiB on Node 20 and 22 (48
// young), 224 on Node 24 (192 young), and bounds sized from that ran a 300,000 x 300,000
// diff out of a 32 MiB heap on Node 22 (the CI run of 5.3.11). V8 does not say how large
// its young generation may grow; the flag that caps the old one is read instead.

const MIB = 1024 * 1024;

/** The value (MiB) of the last `--max-old-space-size` in `args` (either spelling, `=N` or ` N`). */
export function maxOldSpaceFlag(args: readonly string[]): number | undefined {
  let found: number | undefined;
  for (let i = 0; i < args.length; i++) {
    const m = /^--max[-_]old[-_]space[-_]size(?:=(.*))?$/.exec(args[i]!);
    if (!m) continue;
    const value = Number(m[1] ?? args[i + 1]);
    if (Number.isFinite(value) && value > 0) found = value;
  }
  return found;
}

/** What oldSpaceBytes reads of a thread (its own, by default). */
export interface ThreadHeap {
  /** V8's heap_size_limit: the old generation and the young. */
  limit: number;
  isMainThread: boolean;
  /** A worker's resourceLimits.maxYoungGenerationSizeMb (V8's default when not given). */
  youngMb?: number;
  execArgv: readonly string[];
  nodeOptions: string;
}

const thisThread = (): ThreadHeap => ({
  limit: getHeapStatistics().heap_size_limit,
  isMainThread,
  youngMb: resourceLimits.maxYoungGenerationSizeMb,
  execArgv: process.execArgv,
  nodeOptions: process.env.NODE_OPTIONS ?? '',
});

/**
 * The bytes a thread's old generation may hold. The main thread: the flag on node's command
 * line, else in NODE_OPTIONS (which the command line overrides), else the whole heap limit
 * (gigabytes: every bound is at its cap then). A worker thread: its heap limit less the young
 * generation its resource limits name (the flag is V8's, for every thread; a worker's limits
 * report the default old size whatever the flag says, its heap limit does not).
 */
export function oldSpaceBytes(thread: ThreadHeap = thisThread()): number {
  const { limit } = thread;
  if (!thread.isMainThread) {
    const young = (thread.youngMb ?? 0) * MIB;
    return young > 0 && young < limit ? limit - young : limit;
  }
  const flag = maxOldSpaceFlag(thread.execArgv) ?? maxOldSpaceFlag(thread.nodeOptions.split(/\s+/));
  return flag === undefined ? limit : Math.min(limit, flag * MIB);
}

/** This thread's, read once at start. */
export const OLD_SPACE_BYTES = oldSpaceBytes();
