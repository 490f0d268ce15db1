import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { JsonObject } from '../../../core/classify.js';
import { usageError } from '../../../core/errors.js';
import { countedChanges } from '../../../core/snapshots/snapshots.js';
import { ID_FIELDS, NAME_FIELDS, fieldsOf } from '../../../core/diff/diff.js';
import { DatasetLayout } from '../../../core/dataset/layout.js';
import { FETCHED_SINCE } from '../../../core/dataset/schema.js';
import { partitions } from '../../../core/dataset/inventory.js';
import { readPartFile, type PartFile } from '../../../core/dataset/part-file.js';
import { ListCollector, inPeriod, personOf, type HistoryRecord, type HistorySeries, type Period, type Person } from './history-series.js';

// `sgq history --dataset DIR`: the dataset keeps no snapshots, but every run's records, each
// row with the user it was fetched for (`query_user`) and the run's start (`fetched_at`). So
// each run that fetched the user's list is one point: its count is the accounts it holds, and
// its gained and lost are its accounts compared with the run before (by id, else username, as
// churn matches them). Read with hyparquet, as `sgq dataset` reads the files: only the row
// groups whose statistics may hold the user, and of them only the columns needed. Every row
// group is one run's (a part holds one run; compaction copies row groups whole), so the groups
// are read in the order of their `fetched_at`, whatever the files' names.

export interface DatasetHistoryOptions {
  lists: boolean;
  warn: (line: string) => void;
  signal?: AbortSignal;
}

/** A row group that may hold the user's rows. */
interface Group {
  part: PartFile;
  start: number;
  end: number;
  /** Its run's start in microseconds, from the column's statistics (undefined when it has none). */
  fetchedAt?: bigint;
}

/** One run's accounts: by id or username, each with its username (and the fields the page lists). */
interface Run {
  at: bigint;
  /** A --full-every night between whole ones (its rows have fetched_since): what came since, not the whole list. */
  partial?: boolean;
  byId: boolean;
  /** The field that keys its accounts, and the one holding their usernames: chosen from its first row, as a snapshot's are. */
  key?: string;
  name?: string;
  accounts: Map<string, { name: string | null; person?: Person }>;
}

const GZIP = { GZIP: (input: Uint8Array) => new Uint8Array(gunzipSync(input)) };
const STORED = { timestampFromMicroseconds: (micros: bigint) => micros };
const LIST_COLUMNS = ['list_name', 'num_followers', 'bio'].flatMap((f) => [`follower_${f}`, f]);

export async function datasetSeries(dir: string, subject: { route: string; user: string }, period: Period, options: DatasetHistoryOptions): Promise<HistorySeries | undefined> {
  const layout = new DatasetLayout(dir);
  if (!existsSync(layout.root)) throw usageError(`no dataset in ${dir}`, 'name the folder the runs were given as --dataset');
  const until = period.until === undefined ? undefined : BigInt(Date.parse(period.until)) * 1000n;
  const groups = await groupsOf(layout, subject, until);
  const series: HistorySeries = { user: subject.user, route: subject.route, records: [], lists: options.lists ? [] : undefined };
  let previous: Run | undefined;
  let current: Run | undefined;
  let seen = false;
  const finish = (ran: Run) => {
    seen = true;
    const takenAt = isoOf(ran.at);
    // What came since is merged onto the run before, as a partial snapshot is onto the last one.
    const run = ran.partial && previous ? mergedOnto(previous, ran) : ran;
    if (inPeriod(period, takenAt)) addPoint(series, subject, previous, run, takenAt);
    previous = run;
  };
  for (const group of groups) {
    if (options.signal?.aborted) throw options.signal.reason;
    for (const row of await rowsOf(group, subject.user, options.lists)) {
      const at = row.fetched_at as bigint;
      if (until !== undefined && at > until) continue;
      if (current && at !== current.at) {
        if (at < current.at) continue; // a run seen already (a file of an older sgq out of order): counted once
        finish(current);
        current = undefined;
      }
      current ??= startRun(at);
      addAccount(current, row, options.lists);
    }
  }
  if (current) finish(current);
  return seen ? series : undefined;
}

/** The route's row groups that may hold the user (by the statistics of query_user), up to `until`, in the order of their runs. */
async function groupsOf(layout: DatasetLayout, subject: { route: string; user: string }, until: bigint | undefined): Promise<Group[]> {
  const route = subject.route.replaceAll('/', '.');
  const user = Buffer.from(subject.user);
  const groups: Group[] = [];
  for (const partition of partitions(layout, ['records']).filter((p) => p.route === route)) {
    for (const name of partition.files) {
      const part = await readPartFile(join(partition.folder, name));
      let start = 0;
      for (const group of part.metadata.row_groups) {
        const end = start + Number(group.num_rows);
        const stats = (column: string) => group.columns.find((c) => c.meta_data?.path_in_schema.join('.') === column)?.meta_data?.statistics;
        const users = stats('query_user');
        const fetchedAt = stats('fetched_at')?.min_value;
        const mayHold = !(users?.min_value instanceof Uint8Array && users.max_value instanceof Uint8Array) || (Buffer.compare(user, users.min_value) >= 0 && Buffer.compare(user, users.max_value) <= 0);
        const at = typeof fetchedAt === 'bigint' ? fetchedAt : undefined;
        if (mayHold && (until === undefined || at === undefined || at <= until)) groups.push({ part, start, end, fetchedAt: at });
        start = end;
      }
    }
  }
  // Stable: groups without statistics keep their files' order.
  return groups.sort((a, b) => (a.fetchedAt === undefined || b.fetchedAt === undefined ? 0 : a.fetchedAt < b.fetchedAt ? -1 : a.fetchedAt > b.fetchedAt ? 1 : 0));
}

/** The user's rows of a row group: who it was fetched for, when, the identity fields (and with lists, the fields the page shows). */
async function rowsOf(group: Group, user: string, lists: boolean): Promise<Record<string, unknown>[]> {
  const { asyncBufferFromFile, parquetReadObjects } = await import('hyparquet');
  const names = new Set(group.part.schema.slice(1).map((e) => e.name));
  const wanted = ['query_user', 'fetched_at', FETCHED_SINCE, ...ID_FIELDS, ...NAME_FIELDS, ...(lists ? LIST_COLUMNS : [])].filter((c) => names.has(c));
  const file = await asyncBufferFromFile(group.part.path);
  const rows = await parquetReadObjects({ file, metadata: group.part.metadata, rowStart: group.start, rowEnd: group.end, columns: wanted, compressors: GZIP, parsers: STORED, utf8: true });
  return rows.filter((r) => r.query_user === user && typeof r.fetched_at === 'bigint');
}

/** A run keyed as its first row that shows an identity: by id when it has one, else by username. */
function startRun(at: bigint): Run {
  return { at, byId: false, accounts: new Map() };
}

/** Adds a row's account; one without the run's key is left out, one seen twice counts once (as a snapshot keeps them). */
function addAccount(run: Run, row: Record<string, unknown>, lists: boolean): void {
  if (row[FETCHED_SINCE] != null) run.partial = true;
  if (run.key === undefined) {
    const fields = fieldsOf(row);
    if (!fields) return;
    run.byId = fields.id !== undefined;
    run.key = fields.id ?? fields.name;
    run.name = fields.name;
  }
  const value = row[run.key!];
  if (value === null || value === undefined) return;
  const key = String(value);
  if (run.accounts.has(key)) return;
  const name = run.name === undefined || row[run.name] == null ? null : String(row[run.name]);
  run.accounts.set(key, lists ? { name, person: personOf(row as JsonObject) } : { name });
}

function addPoint(series: HistorySeries, subject: { route: string; user: string }, previous: Run | undefined, run: Run, takenAt: string): void {
  const record: HistoryRecord = { user: subject.user, route: subject.route, taken_at: takenAt, count: run.accounts.size, count_is_upper_bound: run.partial === true, gained: null, lost: null };
  if (previous) {
    const lists = new ListCollector(takenAt);
    const counts = countedChanges(compareRuns(previous, run, lists));
    record.gained = counts.gained;
    record.lost = counts.lost;
    series.lists?.push(lists.result);
  }
  series.records.push(record);
}

/**
 * A partial run as the snapshot it stands for: the accounts of the run before (itself whole,
 * or partial and merged so) with what came since; an account that came again replaces the one
 * kept (by id where both have ids, else by username).
 */
function mergedOnto(previous: Run, since: Run): Run {
  const byId = previous.byId && since.byId;
  const accounts = new Map(byId ? previous.accounts : byName(previous));
  for (const [key, account] of byId ? since.accounts : byName(since)) accounts.set(key, account);
  return { at: since.at, partial: true, byId, accounts };
}

/** Who came and who left between two runs; matched by id when both have ids (a new username is a rename), else by username. */
function compareRuns(older: Run, newer: Run, lists: ListCollector): { gained: number; lost: number; renamed: number } {
  const byId = older.byId && newer.byId;
  const a = byId ? older.accounts : byName(older);
  const b = byId ? newer.accounts : byName(newer);
  let gained = 0;
  let lost = 0;
  let renamed = 0;
  for (const [key, account] of b) {
    const before = a.get(key);
    if (!before) {
      gained++;
      if (account.person) lists.add('gained', () => account.person!);
    } else if (byId && before.name !== account.name) renamed++;
  }
  for (const [key, account] of a) {
    if (b.has(key)) continue;
    lost++;
    if (account.person) lists.add('lost', () => account.person!);
  }
  return { gained, lost, renamed };
}

/** A run's accounts by username (one side has no ids). */
function byName(run: Run): Run['accounts'] {
  if (!run.byId) return run.accounts;
  const out: Run['accounts'] = new Map();
  for (const account of run.accounts.values()) if (account.name !== null && !out.has(account.name)) out.set(account.name, account);
  return out;
}

const isoOf = (micros: bigint): string => new Date(Number(micros / 1000n)).toISOString();

