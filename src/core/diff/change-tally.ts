import { emptyCounts, renamedFrom, settled, type Change, type ChangeKind, type DiffCounts } from './merge-diff.js';
import type { KeyOf } from '../records/record-key.js';

// The counts and the changes of a merge of two sides read as bytes (held-diff.ts,
// stored-diff.ts): what diffSorted decides for each key, kept until they are handed on in
// batches. Lines reach it as text: a merge decodes only the lines it reports or must compare.

/** Changes handed on at a time (diffSorted's batch). */
const BATCH = 1000;

export class ChangeTally {
  readonly counts = emptyCounts();
  private out: Change[] = [];

  constructor(private readonly options: { changed: boolean; names?: { older: KeyOf; newer: KeyOf } }) {}

  /** Whether a batch is ready to be handed on. */
  get full(): boolean {
    return this.out.length >= BATCH;
  }

  lost(line: string): void {
    this.counts.lost++;
    this.push('lost', line);
  }

  gained(line: string): void {
    this.counts.gained++;
    this.push('gained', line);
  }

  /** The two lines of one key, as text: unchanged when equal, else renamed or changed as diffSorted says. */
  matched(before: string, after: string): void {
    let from: string | undefined;
    if (before === after) this.counts.unchanged++;
    // Only records that differ are read for their names: an unchanged one costs nothing more.
    else if (this.options.names && (from = renamedFrom(this.options.names, before, after)) !== undefined) {
      this.counts.renamed++;
      this.push('renamed', after, from);
    } else {
      this.counts.changed++;
      if (this.options.changed) this.push('changed', after);
    }
  }

  /** Hands on what is kept, BATCH changes at a time, each awaited. */
  async flush(emit: (changes: Change[]) => Promise<void>): Promise<void> {
    while (this.out.length) {
      const batch = this.out.length > BATCH ? this.out.splice(0, BATCH) : this.out;
      if (batch === this.out) this.out = [];
      await emit(batch);
    }
  }

  /** The counts as told (settled: without --changed, a changed record is unchanged). */
  settled(): DiffCounts {
    return settled(this.counts, this.options.changed);
  }

  private push(change: ChangeKind, line: string, from?: string): void {
    this.out.push(from === undefined ? { change, line } : { change, line, from });
  }
}
