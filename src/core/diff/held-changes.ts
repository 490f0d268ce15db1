import { encodeChange, sortEncodedKeyed, type ChangeSink } from './change-order.js';
import { sortKeyed } from '../records/key-order.js';
import type { Keyed } from '../records/keyed.js';

// The changes a worker thread of a hash diff finds in its joins (diff-worker.ts). While they
// are few (a night's churn) it holds them and, at the end, puts them in key order itself,
// on its own core: the main thread only merges them with its own. Sent as they came, the
// main thread had sorted both threads' changes alone, spilling a run to disk mid-join and
// reading it back while the worker sat idle (traced per phase, issue 22). Past `maxChars`
// they are handed over as they come, as before, and the main thread's sort spills them:
// the worker's memory stays bounded when every record changed.

export class HeldChanges implements ChangeSink {
  /** The changes of the partitions joined before, each partition's in key order (endPartition). */
  private keyed: Keyed[] = [];
  /** The changes of the partition being joined. */
  private lines: string[] = [];
  private chars = 0;
  /** Whether the changes outgrew the bound and go to `handOver` as they come. */
  private handingOver = false;

  constructor(
    private readonly maxChars: number,
    /** Hands a batch of encoded changes (encodeChange) to the main thread; resolves once it may be given another. */
    private readonly handOver: (lines: string[], chars: number) => Promise<void>,
  ) {}

  push(...change: Parameters<ChangeSink['push']>): void {
    const line = encodeChange(...change);
    this.lines.push(line);
    this.chars += line.length;
  }

  /** Called between chunks: past the bound, what is held is handed over. */
  async flush(): Promise<void> {
    if (!this.handingOver && this.chars <= this.maxChars) return;
    this.handingOver = true;
    if (!this.lines.length && !this.keyed.length) return;
    // In arrival order by partition: the main thread's sort keeps the first of a key twice.
    const lines = this.keyed.map((item) => item.line);
    for (const line of this.lines) lines.push(line);
    const { chars } = this;
    [this.lines, this.keyed, this.chars] = [[], [], 0];
    await this.handOver(lines, chars);
  }

  /**
   * A partition's join is done: its changes are put in key order now. Sorted all at the end,
   * ~30,000 changes took the worker 20-25 ms after its last partition, where the main thread
   * waited (traced per phase, issue 22); now the last merges runs already in order (V8's
   * sort finds them), and a key is in one partition only, so the order is the same.
   */
  endPartition(): void {
    if (this.handingOver) return;
    for (const item of sortEncodedKeyed(this.lines)) this.keyed.push(item);
    this.lines = [];
  }

  /** At the end of the joins: the changes held, in key order; none when they were handed over as they came. */
  async end(): Promise<string[]> {
    if (this.handingOver) {
      await this.flush();
      return [];
    }
    this.endPartition();
    const held = sortKeyed(this.keyed).map((item) => item.line);
    [this.keyed, this.chars] = [[], 0];
    return held;
  }
}
