import { ExternalSort } from '../sort/external-sort.js';
import { sortKeyed } from '../records/key-order.js';
import type { Keyed } from '../records/keyed.js';
import type { Change, ChangeKind } from './merge-diff.js';

// The changes a hash diff finds, put in key order: the order a merge of sorted sides gives,
// so that the output does not depend on how the sides were read. Changes are few next to
// the records (a night's churn), and sorted on disk beyond a bounded size when they are not.

const KINDS: Record<string, ChangeKind> = { g: 'gained', l: 'lost', r: 'renamed', c: 'changed' };

/** A change as one line: its key as JSON (no raw line break), a letter, the old name as JSON or nothing, the record line. */
export const encodeChange = (key: string, change: ChangeKind, line: string, from?: string) => `${JSON.stringify(key)}\t${change[0]}\t${from === undefined ? '' : JSON.stringify(from)}\t${line}`;

/** Where the JSON string at the start of `text` ends (its closing quote). */
function stringEnd(text: string, from = 0): number {
  let i = from + 1;
  while (text.charCodeAt(i) !== 0x22) i += text.charCodeAt(i) === 0x5c ? 2 : 1;
  return i;
}

function keyOf(text: string): string {
  const end = stringEnd(text);
  const inner = text.slice(1, end);
  return inner.includes('\\') ? (JSON.parse(text.slice(0, end + 1)) as string) : inner;
}

function decode(text: string): Change {
  const kindAt = stringEnd(text) + 2;
  const change = KINDS[text[kindAt]!]!;
  const fromAt = kindAt + 2;
  if (text.charCodeAt(fromAt) === 0x09) return { change, line: text.slice(fromAt + 1) };
  const fromEnd = stringEnd(text, fromAt);
  return { change, from: JSON.parse(text.slice(fromAt, fromEnd + 1)) as string, line: text.slice(fromEnd + 2) };
}

const BATCH = 1000;

/** Encoded changes (encodeChange) in key order: how a worker thread hands over those it held (held-changes.ts). */
export function sortEncoded(lines: readonly string[]): string[] {
  return sortEncodedKeyed(lines).map((item) => item.line);
}

/** The same, with their keys. */
export const sortEncodedKeyed = (lines: readonly string[]): Keyed[] => sortKeyed(lines.map((line) => ({ key: keyOf(line), line })));

/** Encoded changes already in key order, keyed a batch at a time as the merge takes them. */
async function* keyedBatches(lines: readonly string[]): AsyncGenerator<Keyed[]> {
  for (let i = 0; i < lines.length; i += BATCH) yield lines.slice(i, i + BATCH).map((line) => ({ key: keyOf(line), line }));
}

/** Where a partition's join puts its changes: the order below, or a worker's batch for it (diff-worker.ts). */
export interface ChangeSink {
  push(key: string, change: ChangeKind, line: string, from?: string): void;
  /** Called between chunks: what was pushed moves on. */
  flush(): Promise<void>;
}

export class ChangeOrder implements ChangeSink {
  private readonly sort: ExternalSort;
  private pending: string[] = [];
  /** Changes another thread put in key order (sortEncoded), merged with the rest at the end. */
  private readonly inOrder: (readonly string[])[] = [];
  private flushing: Promise<void> = Promise.resolve();

  constructor(dir: string, signal?: AbortSignal) {
    this.sort = new ExternalSort(keyOf, dir, { signal });
  }

  push(key: string, change: ChangeKind, line: string, from?: string): void {
    this.pending.push(encodeChange(key, change, line, from));
  }

  /** Changes another thread encoded (encodeChange), taken in with the next flush (the caller's to call). */
  pushEncoded(lines: readonly string[]): void {
    for (const line of lines) this.pending.push(line);
  }

  /** Changes another thread encoded and put in key order (sortEncoded); held until `sorted`. */
  pushSorted(lines: readonly string[]): void {
    if (lines.length) this.inOrder.push(lines);
  }

  /**
   * Hands what was pushed to the sort (which may spill a run): call between chunks. Flushes
   * run one after another: the worker thread's changes (diff-lane.ts) and this thread's may
   * be flushed at once, and two spills at once could merge a run still being written.
   */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.flushPending());
    return this.flushing;
  }

  private async flushPending(): Promise<void> {
    if (!this.pending.length) return;
    const lines = this.pending;
    this.pending = [];
    await this.sort.add(lines);
  }

  /**
   * A partition's join is done: its changes, and any another thread handed over meanwhile,
   * are put in key order now, as a run of their own. Sorted all at once after the joins, the
   * main thread's ~30,000 changes took it 12-28 ms of CPU when the worker's were ready
   * (traced per phase, issue 22).
   */
  async endPartition(): Promise<void> {
    await this.flush();
    this.sort.sortRecent();
  }

  /** Puts what this thread holds in key order now, while another thread sorts its own (diff-lane.ts). */
  async sortHeld(): Promise<void> {
    await this.flush();
    this.sort.sortHeld();
  }

  /** Every change, in key order, in batches. */
  async *sorted(): AsyncGenerator<Change[]> {
    await this.flush();
    let out: Change[] = [];
    for await (const batch of this.sort.sorted(this.inOrder.splice(0).map(keyedBatches))) {
      for (const item of batch) out.push(decode(item.line));
      if (out.length >= BATCH) {
        yield out;
        out = [];
      }
    }
    if (out.length) yield out;
  }

  discard(): void {
    this.sort.discard();
  }
}
