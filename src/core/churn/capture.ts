import { mkdirSync } from 'node:fs';
import type { JsonObject } from '../classify.js';
import { stringifyJson } from '../json.js';
import { ExternalSort } from './external-sort.js';
import { keyReader } from './record-key.js';
import { SNAPSHOT_KEY, type SnapshotStore, type SnapshotSubject, type SnapshotMeta, type StagedSnapshot } from './store.js';

/**
 * Collects one user's export page by page, sorted by username (spilling to the user's
 * snapshot folder beyond a bounded size), and stages it as a snapshot once it is complete.
 */
export class SnapshotCapture {
  private readonly sort: ExternalSort;
  pages = 0;

  constructor(
    private readonly store: SnapshotStore,
    readonly subject: SnapshotSubject,
  ) {
    const folder = store.folder(subject);
    mkdirSync(folder, { recursive: true });
    this.sort = new ExternalSort(keyReader(SNAPSHOT_KEY), folder, String(store.owner.pid));
  }

  async add(records: readonly JsonObject[], lossless: boolean): Promise<void> {
    this.pages++;
    const text = lossless ? stringifyJson : JSON.stringify;
    await this.sort.add(records.map((r) => text(r)));
  }

  /** Records left out: those without a username, and a username seen twice. */
  get stats() {
    return this.sort.stats;
  }

  /** Writes the sorted export as a staged snapshot (the caller holds the subject's lock). */
  stage(meta: Pick<SnapshotMeta, 'taken_at' | 'complete' | 'credits_used'>): Promise<StagedSnapshot> {
    return this.store.stage(this.subject, this.sort.sorted(), { ...meta, pages: this.pages, sorted_by: SNAPSHOT_KEY });
  }

  discard(): void {
    this.sort.discard();
  }
}
