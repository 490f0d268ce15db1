/**
 * Resolves as soon as `check()` holds, looking again every few milliseconds; rejects naming
 * `what` if it still does not hold after `ms`. For tests: wait on a condition, never a time.
 */
export async function until(check: () => boolean, what: string, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
