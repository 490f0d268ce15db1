import type { JsonObject } from '../classify.js';
import { stringifyJson } from '../json.js';
import { makePrivateFolder } from '../../fs/modes.js';
import { ExternalSort } from './external-sort.js';
import { fieldsOf, noIdentity, snapshotField, type Fields } from './identity.js';
import { keyReader, type KeyOf } from './record-key.js';
import type { SnapshotStore, SnapshotSubject, SnapshotMeta, StagedSnapshot, SnapshotIdentity } from './store.js';

/**
 * Collects one user's export page by page, sorted by the field that identifies its accounts
 * (spilling to the user's snapshot folder beyond a bounded size), and stages it as a
 * snapshot once it is complete. The field is chosen from the first record that shows one:
 * --key, else an id, else the username.
 */
export class SnapshotCapture {
  private readonly sort: ExternalSort;
  private fields?: Fields;
  private read?: KeyOf;
  /** The fields of the first record, to name in an error. */
  private sample?: string[];
  pages = 0;

  constructor(
    private readonly store: SnapshotStore,
    readonly subject: SnapshotSubject,
    /** The field --key named, if any. */
    private readonly key?: string,
  ) {
    const folder = store.folder(subject);
    makePrivateFolder(folder);
    // Until a record shows its identity, none can be keyed: those are counted as left out.
    this.sort = new ExternalSort((line) => this.read?.(line), folder);
  }

  async add(records: readonly JsonObject[], lossless: boolean): Promise<void> {
    this.pages++;
    if (!this.fields) this.choose(records);
    const text = lossless ? stringifyJson : JSON.stringify;
    await this.sort.add(records.map((r) => text(r)));
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

  /** Writes the sorted export as a staged snapshot (the caller holds the subject's lock). */
  stage(meta: Pick<SnapshotMeta, 'taken_at' | 'complete' | 'credits_used'>): Promise<StagedSnapshot> {
    const f = this.fields;
    const identity: SnapshotIdentity = !f ? 'none' : f.key !== undefined ? 'key' : f.id !== undefined ? 'id' : 'username';
    return this.store.stage(this.subject, this.sort.sorted(), { ...meta, pages: this.pages, sorted_by: this.sortedBy, identity });
  }

  discard(): void {
    this.sort.discard();
  }
}
