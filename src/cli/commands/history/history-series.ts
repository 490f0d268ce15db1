import type { JsonObject } from '../../../core/classify.js';
import type { Json } from '../../../core/json.js';

// What `sgq history` prints and draws, whatever it was read from (the snapshot store or a
// dataset): one record per snapshot, and for the page the accounts that came and went.

/** One snapshot's numbers: the record `sgq history` prints. `gained` and `lost` are null for a user's first snapshot. */
export interface HistoryRecord {
  user: string;
  route: string;
  taken_at: string;
  count: number;
  /** A partial snapshot of --full-every: its count holds accounts that may have left since its last whole one. */
  count_is_upper_bound: boolean;
  gained: number | null;
  lost: number | null;
}

/** An account as the page lists it: the fields a person checks. */
export interface Person {
  username: string | null;
  name: string | null;
  followers: number | null;
  bio: string | null;
}

/** Who came and who left at one snapshot (at most LIST_CAP of each, with how many were left out). */
export interface SnapshotLists {
  taken_at: string;
  gained: Person[];
  lost: Person[];
  gained_left_out: number;
  lost_left_out: number;
}

/** One user's list (followers or following) over the period. */
export interface HistorySeries {
  user: string;
  route: string;
  records: HistoryRecord[];
  /** With --html: the lists of each snapshot that has a snapshot before it, oldest first. */
  lists?: SnapshotLists[];
}

/** The period --since and --until bound (ISO instants, both ends included). */
export interface Period {
  since?: string;
  until?: string;
}

export const inPeriod = (period: Period, takenAt: string): boolean =>
  (period.since === undefined || takenAt >= period.since) && (period.until === undefined || takenAt <= period.until);

/** How many accounts of each kind a snapshot's list shows on the page; the rest are counted. */
export const LIST_CAP = 1000;

/** The record printed for a snapshot: the fields in this order. */
export const historyRecord = (r: HistoryRecord): JsonObject => ({ user: r.user, route: r.route, taken_at: r.taken_at, count: r.count, count_is_upper_bound: r.count_is_upper_bound, gained: r.gained, lost: r.lost });

/** The route of the followers or following list. */
export const routeOf = (following: boolean | undefined): string => (following ? 'graph/get_following' : 'graph/get_followers');

const text = (v: Json | undefined): string | null => (v === undefined || v === null ? null : typeof v === 'string' ? v : String(v));

function count(v: Json | undefined): number | null {
  if (v === undefined || v === null) return null;
  const n = typeof v === 'number' ? v : Number(String(v));
  return Number.isFinite(n) ? n : null;
}

/** An account's fields from a follower record (`follower_…`) or a following record (plain). */
export function personOf(record: JsonObject): Person {
  const field = (name: string): Json | undefined => record[`follower_${name}`] ?? record[name];
  return { username: text(field('username')), name: text(field('list_name')), followers: count(field('num_followers')), bio: text(field('bio')) };
}

/** Collects a snapshot's lists: at most LIST_CAP of each kind, and how many more. */
export class ListCollector {
  private readonly lists: SnapshotLists;

  constructor(takenAt: string) {
    this.lists = { taken_at: takenAt, gained: [], lost: [], gained_left_out: 0, lost_left_out: 0 };
  }

  add(kind: 'gained' | 'lost', person: () => Person): void {
    const list = this.lists[kind];
    if (list.length < LIST_CAP) list.push(person());
    else this.lists[`${kind}_left_out`]++;
  }

  get result(): SnapshotLists {
    return this.lists;
  }
}
