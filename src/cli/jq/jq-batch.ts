// The batch --jq hands to jq: records' JSON texts, one a line, as UTF-8 bytes, which is what jq
// reads. Bytes, not a string: they move to the worker thread without a copy (transferred) and
// back again to be filled anew, and live outside V8's heap. A batch kept as one string of about
// 1 MiB was a large object on both threads' heaps, freed only by a full garbage collection, so
// that tens of them were alive at once (the main thread's heap grew from 17 to 43 MiB).

const encoder = new TextEncoder();

const NONE = new Uint8Array(0);

/**
 * Records' JSON texts appended into a buffer that is reused from batch to batch. A batch takes
 * its buffer from `fresh` when its first record comes, so a run whose records never go to jq
 * (the subset answers them) holds none.
 */
export class ByteBatch {
  /** Records in the batch. */
  records = 0;
  /** Bytes used. */
  length = 0;
  private buffer: Uint8Array = NONE;

  constructor(private readonly fresh: () => Uint8Array) {}

  /** Appends the JSON texts of one page's records, each on a line of its own. */
  append(texts: readonly string[]): void {
    this.appendLine(texts.join('\n'), texts.length);
  }

  /** Appends one page's records as one JSON array, on a line of its own (see runBatch's `pages`). */
  appendPage(array: string, records: number): void {
    this.appendLine(array, records);
  }

  private appendLine(line: string, records: number): void {
    if (records === 0) return;
    if (this.buffer === NONE) this.buffer = this.fresh();
    let text = `${this.records === 0 ? '' : '\n'}${line}`;
    this.records += records;
    for (;;) {
      // encodeInto never splits a character: what it did not read is whole characters.
      const { read, written } = encoder.encodeInto(text, this.buffer.subarray(this.length));
      this.length += written;
      if (read === text.length) return;
      text = text.slice(read);
      this.grow(text.length * 3);
    }
  }

  /** The bytes of the batch, its buffer given up (the batch is empty again; its next record takes a fresh buffer). */
  take(): Uint8Array {
    const bytes = this.buffer.subarray(0, this.length);
    [this.buffer, this.length, this.records] = [NONE, 0, 0];
    return bytes;
  }

  private grow(more: number): void {
    const bigger = new Uint8Array(Math.max(this.buffer.length * 2, this.length + more));
    bigger.set(this.buffer.subarray(0, this.length));
    this.buffer = bigger;
  }
}
