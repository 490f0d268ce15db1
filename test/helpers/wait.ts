/** How often a wait looks again: short beside any deadline, long enough not to spin a core. */
const POLL_MS = 25;

/** Waits until `condition` gives a truthy value and returns it, looking again until a deadline: never a fixed sleep. */
export async function waitFor<T>(condition: () => T | Promise<T>, what: string, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await condition();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** Waits for a condition, until a deadline. */
export async function until(condition: () => boolean | Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  await waitFor(condition, what, ms);
}

/** Whether a process is still running (signal 0 only checks). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
