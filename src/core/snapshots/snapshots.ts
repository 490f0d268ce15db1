// The snapshot store and what a --snapshot run keeps in it, as the rest of sgq sees it (the
// CLI's checkpoint of a run, `sgq diff USER`, `sgq history`, `sgq snapshots`): the store over
// paths (store.ts), a user's export captured in key order and staged (capture.ts), the partial
// snapshots and periods of --full-every (partial.ts, full-every.ts), the rule of when a loss is
// confirmed (confirm-lost.ts), the counts a snapshot keeps (counts.ts) and what --notify posts
// (notification.ts). The diff it stands on is src/core/diff's (diff.ts).

export { SnapshotStore, StagedSnapshot, defaultSnapshotRoot, unreadable } from './store.js';
export type { OpenSnapshot, SnapshotCounts, SnapshotMeta, SnapshotSubject, StoredSnapshot } from './store.js';
export type { LockOwner } from './store-lock.js';
export { SnapshotCapture } from './capture.js';
export { RunMemory } from '../sort/memory-budget.js';
export { heldShare, stagePartial } from './partial.js';
export { WHOLE_ASKED, clearWholeNext, markWholeNext, periodBefore, planNight, reachesLastWhole, wholeNextMark, type NightPlan } from './full-every.js';
export { confirmationWindow, diffWindow, reachesWindow, type WindowCounts } from './confirm-lost.js';
export { comparable, countSnapshot, countedChanges, countsOf, diffSide, diffSnapshots } from './counts.js';
export { AccountRoom, listChange, notificationBody, type UserChanges } from './notification.js';
