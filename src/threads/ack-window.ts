// Notes a thread posted to its lane and the lane has not yet acknowledged, bounded by their
// size (serve.ts's noteInWindow): the worker of a hash diff posts its changes to the main
// thread, which acknowledges each batch once it is in the sort (src/core/diff/diff-lane.ts).
//
// The bound is on characters, not batches: a bound of 4 batches kept the worker waiting ~220 ms
// of a 1,000,000-record diff whose batches are small (a few hundred changes each) while the
// main thread joined a partition; a bound on their size keeps memory as bounded (a batch is at
// most one chunk's changes) and lets small batches flow.

interface Batch {
  chars: number;
  acked: Promise<void>;
  ack: () => void;
}

export class AckWindow {
  private readonly inFlight: Batch[] = [];
  private chars = 0;

  constructor(private readonly maxChars: number) {}

  /** Characters posted and not yet acknowledged. */
  get pending(): number {
    return this.chars;
  }

  /** Resolves once a batch may be posted: once what is in flight is under the bound. */
  async room(): Promise<void> {
    while (this.chars >= this.maxChars) await this.inFlight[0]!.acked;
  }

  /** A batch of `chars` characters was posted. */
  posted(chars: number): void {
    let ack = () => undefined as void;
    const acked = new Promise<void>((resolve) => (ack = resolve));
    this.inFlight.push({ chars, acked, ack });
    this.chars += chars;
  }

  /** The oldest batch in flight was acknowledged (acknowledgements come in the order of the batches). */
  acknowledged(): void {
    const batch = this.inFlight.shift();
    if (!batch) return;
    this.chars -= batch.chars;
    batch.ack();
  }

  /** Resolves once every batch posted is acknowledged. */
  async drained(): Promise<void> {
    while (this.inFlight.length) await this.inFlight[this.inFlight.length - 1]!.acked;
  }
}
