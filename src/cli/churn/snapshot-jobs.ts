import { usageError } from '../../core/errors.js';
export { openSnapshotStore } from './open-store.js';
import { SnapshotCapture } from '../../core/churn/capture.js';
import { diffSorted } from '../../core/churn/merge-diff.js';
import { snapshotRecords } from '../../core/churn/sources.js';
import type { KeyStats } from '../../core/churn/keyed.js';
import type { SnapshotStore, SnapshotSubject } from '../../core/churn/store.js';
import type { Job } from '../run/runner.js';
import { changeRecords, countsText, leftOutText } from './churn-text.js';

export interface SnapshotFlags {
  snapshot?: boolean;
  changes?: boolean;
  snapshotDir?: string;
  all?: boolean;
  since?: string;
  sinceLast?: boolean;
  raw?: boolean;
}

/** A snapshot is a whole list: the flags that would make it anything else are refused up front. */
export function checkSnapshotFlags(flags: SnapshotFlags): void {
  if (flags.changes && !flags.snapshot) throw usageError('--changes needs --snapshot', 'the changes are those against the previous snapshot');
  if (flags.snapshotDir !== undefined && !flags.snapshot) throw usageError('--snapshot-dir needs --snapshot');
  if (!flags.snapshot) return;
  if (!flags.all) throw usageError('--snapshot needs --all', 'a snapshot is the whole list');
  if (flags.since !== undefined || flags.sinceLast) throw usageError('--snapshot cannot be used with --since or --since-last', 'a snapshot is the whole list');
  if (flags.raw) throw usageError('--snapshot cannot be used with --raw');
}

/**
 * The hooks that keep one user's export as a snapshot: every page goes into a capture; a
 * complete export is stored, anything cut short is dropped and said so; with --changes the
 * records are not printed, the changes against the previous snapshot are.
 */
export function snapshotHooks(store: SnapshotStore, subject: SnapshotSubject, takenAt: Date, changes: boolean): Pick<Job, 'onRecords' | 'hideRecords' | 'onEnd'> {
  let capture: SnapshotCapture | undefined;
  const who = `sgq: ${subject.user}:`;
  return {
    hideRecords: changes,
    onRecords: async (records, lossless) => {
      capture ??= new SnapshotCapture(store, subject);
      await capture.add(records, lossless);
    },
    onEnd: async ({ cutShort, credits, emit, reporter }) => {
      capture ??= new SnapshotCapture(store, subject);
      if (cutShort) {
        capture.discard();
        reporter.warn(`${subject.user}: not stored as a snapshot: ${cutShort}; only a complete export is kept`);
        return;
      }
      const { current, previous } = await capture.commit({ taken_at: takenAt.toISOString(), complete: true, credits_used: credits });
      try {
        const note = leftOutText(capture.stats, 'username', `${subject.user}: snapshot`);
        if (note) reporter.warn(note);
        reporter.trace(`${subject.user}: snapshot of ${current.meta.records} records stored in ${current.dataPath}`);
        if (!changes) return;
        if (!previous) {
          reporter.info(`${who} first snapshot (${current.meta.records.toLocaleString('en-US')} records); changes are printed from the next one`);
          return;
        }
        const stats: KeyStats = { missingKey: 0, duplicates: 0 };
        const counts = await diffSorted(
          snapshotRecords(previous.handle, previous.meta.sorted_by, stats, previous.dataPath),
          snapshotRecords(current.handle, current.meta.sorted_by, stats, current.dataPath),
          { changed: false },
          (batch) => emit(changeRecords(batch), true),
        );
        const incomplete = previous.meta.complete ? '' : ' (the previous snapshot was not complete: "lost" means "not seen")';
        reporter.info(`${who} ${countsText(counts, false)} since ${previous.meta.taken_at}${incomplete}`);
      } finally {
        await Promise.all([current.handle.close(), previous?.handle.close()]);
      }
    },
  };
}
