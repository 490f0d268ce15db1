import type { JsonObject } from '../classify.js';
import { stringifyJson } from '../json.js';
import { makePrivateFolder } from '../../fs/modes.js';
import { ExternalSort, RUN_CHARS } from '../sort/external-sort.js';
import type { Keyed } from '../records/keyed.js';
import { LineBytesBuilder, type LineBytes } from '../records/line-bytes.js';
import type { MemoryShare, RunMemory } from '../sort/memory-budget.js';
import { fieldsOf, noIdentity, snapshotField, type Fields } from '../records/identity.js';
import { keyReader, recordKey, type KeyOf } from '../records/record-key.js';
import type { SnapshotStore, SnapshotSubject, SnapshotMeta, StagedSnapshot, SnapshotIdentity } from './store.js';

/**
 * Collects one user's export page by page, each record's line encoded as it comes (held as
 * bytes, line-bytes.ts), sorted by the field that identifies its accounts (spilling to the
 * user's snapshot folder beyond a bounded size), and stages it as a snapshot once it is
 * complete. The field is chosen from the first record that shows one: --key, else an id,
 * else the username.
 */
export class SnapshotCapture {
  /** The runs spilled to disk, and their merge; what came since the last is `held`. */
  private readonly sort: ExternalSort;
  /** The lines that came since the last run spilled, in arrival order, as bytes. */
  private held = new LineBytesBuilder();
  /** Its part of the run's memory: the bytes it holds, then those of the export held in order, until `release`. */
  private readonly share?: MemoryShare;
  private fields?: Fields;
  private read?: KeyOf;
  /** The fields of the first record, to name in an error. */
  private sample?: string[];
  /** The staged export in key order, with its bytes as written, when it fitted in memory (`stage`), until `release`. */
  inOrder?: LineBytes;
  pages = 0;

  constructor(
    private readonly store: SnapshotStore,
    readonly subject: SnapshotSubject,
    /** The field --key named, if any. */
    private readonly key?: string,
    /** The memory the run's users in flight share: beyond it, the export is sorted on disk. */
    memory?: RunMemory,
  ) {
    const folder = store.folder(subject);
    makePrivateFolder(folder);
    this.share = memory?.lines.share();
    // Its runs are read back keyed from their lines.
    this.sort = new ExternalSort((line) => this.read?.(line), folder);
  }

  async add(records: readonly JsonObject[], lossless: boolean): Promise<void> {
    this.pages++;
    if (!this.fields) this.choose(records);
    const text = lossless ? stringifyJson : JSON.stringify;
    // Keyed from the records as parsed, not from their lines: the same keys, without reading each line again.
    const field = this.fields && snapshotField(this.fields);
    for (const record of records) {
      const key = field === undefined ? undefined : recordKey(record, field);
      // Until a record shows its identity, none can be keyed: those are counted as left out.
      if (key === undefined) this.sort.stats.missingKey++;
      else this.held.add(key, text(record));
    }
    // Past a run's size (RUN_CHARS, taken as bytes here: about what the lines took as strings,
    // one or two bytes a character), or the run's budget: sorted, onto disk.
    if (this.held.bytes >= RUN_CHARS || this.share?.resize(this.held.bytes) === false) await this.spill();
  }

  private async spill(): Promise<void> {
    this.share?.spilled();
    const run = this.takeHeld();
    await this.sort.addRun(run.pieces(RUN_PIECE));
    // Written: what it holds is what came since (another page may have come while it wrote).
    this.share?.resize(this.held.bytes);
  }

  /** What came since the last spill, in key order, each key once; `held` starts again. */
  private takeHeld(): LineBytes {
    const held = this.held.done();
    this.held = new LineBytesBuilder();
    const sorted = held.sorted(this.sort.stats);
    held.recycle();
    return sorted;
  }

  private choose(records: readonly JsonObject[]): void {
    for (const record of records) {
      this.sample ??= Object.keys(record);
      const fields = fieldsOf(record, this.key);
      if (!fields) continue;
      this.fields = fields;
      this.read = keyReader(snapshotField(fields));
      return;
    }
  }

  /** The field it is sorted by (the username when it has no records). */
  get sortedBy(): string {
    return this.fields ? snapshotField(this.fields) : (this.key ?? 'username');
  }

  /** Records left out: those without the field, and a key seen twice. */
  get stats() {
    return this.sort.stats;
  }

  /** Throws when records came and none showed an identity: such a snapshot could never be compared. */
  checkIdentity(where: string): void {
    if (!this.fields && this.sort.stats.missingKey > 0) throw noIdentity(where, this.key, this.sample);
  }

  /**
   * Writes the sorted export as a staged snapshot (the caller holds the subject's lock). An
   * export that fitted in memory stays there, in order, as `inOrder`, until `release`: its
   * diff reads it (and compares the stored snapshot's bytes with those it was written as)
   * instead of the file just written.
   */
  stage(meta: Pick<SnapshotMeta, 'taken_at' | 'complete' | 'credits_used'>): Promise<StagedSnapshot> {
    const f = this.fields;
    const identity: SnapshotIdentity = !f ? 'none' : f.key !== undefined ? 'key' : f.id !== undefined ? 'id' : 'username';
    const held = this.takeHeld();
    this.inOrder = this.sort.spilled ? undefined : held;
    const sorted = this.inOrder ? once(this.inOrder) : this.sort.sorted([held.batches()]);
    return this.store.stage(this.subject, sorted, { ...meta, pages: this.pages, sorted_by: this.sortedBy, identity });
  }

  /** The records in key order, without staging them: what came since, merged onto the last snapshot (partial.ts). */
  sorted(): AsyncIterable<Keyed[]> {
    const held = this.takeHeld();
    return this.sort.spilled ? this.sort.sorted([held.batches()]) : held.batches();
  }

  /** Lets go of the records held in memory (once the diff is done): their pieces go to the next user's. */
  release(): void {
    this.inOrder?.recycle();
    this.drop();
  }

  /** After a failure: the records held are let go of, not reused (a write that failed may still read them). */
  discard(): void {
    this.drop();
    this.sort.discard();
  }

  private drop(): void {
    this.inOrder = undefined;
    this.held = new LineBytesBuilder();
    this.share?.release();
  }
}

/** The least a spilled run's write holds: a held export's pieces (128 KiB) go as they are, smaller ones joined. */
const RUN_PIECE = 64 * 1024;

/** The held export as the one batch the store writes, already encoded. */
async function* once(bytes: LineBytes): AsyncGenerator<LineBytes> {
  yield bytes;
}

