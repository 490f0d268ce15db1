import type { JsonObject } from '../classify.js';
import { stringifyJson } from '../json.js';
import { makePrivateFolder } from '../../fs/modes.js';
import { ExternalSort, batchesOf } from '../diff/external-sort.js';
import type { Keyed } from '../diff/keyed.js';
import { LineBytes } from '../diff/line-bytes.js';
import type { MemoryShare, RunMemory } from '../diff/memory-budget.js';
import { fieldsOf, noIdentity, snapshotField, type Fields } from '../diff/identity.js';
import { keyReader, recordKey, type KeyOf } from '../diff/record-key.js';
import type { SnapshotStore, SnapshotSubject, SnapshotMeta, StagedSnapshot, SnapshotIdentity } from './store.js';

/**
 * Collects one user's export page by page, sorted by the field that identifies its accounts
 * (spilling to the user's snapshot folder beyond a bounded size), and stages it as a
 * snapshot once it is complete. The field is chosen from the first record that shows one:
 * --key, else an id, else the username.
 */
export class SnapshotCapture {
  private readonly sort: ExternalSort;
  /** Its part of the run's memory: the lines its sort holds, then those of the export held in order, until `release`. */
  private readonly share?: MemoryShare;
  /** And of the bytes kept beside them. */
  private readonly bytesShare?: MemoryShare;
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
    this.bytesShare = memory?.bytes.share();
    // Until a record shows its identity, none can be keyed: those are counted as left out.
    this.sort = new ExternalSort((line) => this.read?.(line), folder, { share: this.share });
  }

  async add(records: readonly JsonObject[], lossless: boolean): Promise<void> {
    this.pages++;
    if (!this.fields) this.choose(records);
    const text = lossless ? stringifyJson : JSON.stringify;
    // Keyed from the records as parsed, not from their lines: the same keys, without reading each line again.
    const field = this.fields && snapshotField(this.fields);
    const keys = records.map((r) => (field === undefined ? undefined : recordKey(r, field)));
    await this.sort.addKeyed(
      records.map((r) => flat(text(r))),
      keys,
    );
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
    const held = this.sort.inMemory();
    // Its bytes are kept too when the run's budget for them has room; else each line is encoded again when compared.
    this.inOrder = held && new LineBytes(held, (chars) => this.bytesShare?.resize(chars) ?? true);
    const sorted = this.inOrder ? once(this.inOrder) : this.sort.sorted();
    return this.store.stage(this.subject, sorted, { ...meta, pages: this.pages, sorted_by: this.sortedBy, identity });
  }

  /** The records in key order, without staging them: what came since, merged onto the last snapshot (partial.ts). */
  sorted(): AsyncIterable<Keyed[]> {
    const held = this.sort.inMemory();
    return held ? batchesOf(held) : this.sort.sorted();
  }

  /** Lets go of the records held in memory (once the diff is done). */
  release(): void {
    this.inOrder = undefined;
    this.share?.release();
    this.bytesShare?.release();
  }

  discard(): void {
    this.release();
    this.sort.discard();
  }
}

/** The held export as the one batch the store writes, already encoded. */
async function* once(bytes: LineBytes): AsyncGenerator<LineBytes> {
  yield bytes;
}

/**
 * The same string, flat. V8 keeps a string built piece by piece (stringifyJson's) as a tree of
 * its pieces, which held 2.6 times the memory of its characters while the export was sorted
 * and was copied flat again by each comparison of the diff; reading a character flattens it
 * in place, once, while the pieces are still young garbage.
 */
function flat(text: string): string {
  text.charCodeAt(0);
  return text;
}
