import { readFileSync } from 'node:fs';

// Who a lock or a temporary file belongs to: a process on this host (checked by pid and start
// time) or one on another host (a container sharing the folder), which cannot be checked.

let host: string | undefined;

/** This machine's host name, as lock files record it (read once). */
export function thisHost(): string {
  // node:os on first use, not at start-up, and not on Linux (about 0.15 ms of a one-page run,
  // whose credits note names a temporary file after the host).
  host ??= kernelHostname() ?? process.getBuiltinModule('node:os').hostname();
  return host;
}

/**
 * Linux's host name as its kernel keeps it for this process's UTS namespace: what
 * gethostname(2), and so os.hostname(), return. Undefined elsewhere or when it cannot be read.
 */
export function kernelHostname(): string | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    const name = readFileSync('/proc/sys/kernel/hostname', 'utf8').replace(/\n$/, '');
    return name === '' ? undefined : name;
  } catch {
    return undefined;
  }
}

/** The process's start time in clock ticks since boot (field 22 of /proc/PID/stat); undefined off Linux. */
export function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

let own: { start: string | undefined } | undefined;

/**
 * This process's start time, read once: a lock records it (a run takes one per user of a
 * --snapshot batch), and reading /proc/self/stat each time was 1-2% of a nightly job's CPU.
 */
export function thisProcessStart(): string | undefined {
  own ??= { start: processStart(process.pid) };
  return own.start;
}

/**
 * Whether the process `pid` of this host still runs; with `start`, also that it is the very
 * process that recorded it (a reused pid is not). Unknown counts as alive.
 */
export function processAlive(pid: number, start?: string): boolean {
  if (pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  const now = start === undefined ? undefined : processStart(pid);
  return start === undefined || now === undefined || now === start;
}
