// The ends of jobs (--snapshot's stage, diff and commit) that run on while their worker fetches
// the next user (jobs.ts): at most a bound of them at once, and the first that fails fails the
// run, as it did when each worker awaited its own.

export class RunningEnds {
  private readonly running = new Set<Promise<void>>();
  private failure: { error: unknown } | undefined;

  /** One failed: the run starts no further job. */
  get failed(): boolean {
    return this.failure !== undefined;
  }

  /** Tracks a job's end; its failure is kept for the next wait. */
  add(end: Promise<void>): void {
    this.running.add(end);
    end.then(
      () => this.running.delete(end),
      (error: unknown) => {
        this.running.delete(end);
        this.failure ??= { error };
      },
    );
  }

  /** Waits until at most `most` run (0: until none runs); throws the first failure of one. */
  async atMost(most: number): Promise<void> {
    while (this.running.size > most) await Promise.race(this.running).catch(() => undefined);
    if (this.failure) throw this.failure.error;
  }
}
