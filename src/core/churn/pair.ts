import type { FileHandle } from 'node:fs/promises';
import { chooseMatch, type Glimpse, type Match } from './identity.js';
import type { Keyed, KeyStats } from './keyed.js';
import { LineTooLong, lineBatches, openText } from './lines.js';
import { diffSorted, type Change, type DiffCounts } from './merge-diff.js';
import { NotARecord, keyReader } from './record-key.js';
import { exportLines, glimpse, snapshotRecords, sortedExport } from './sources.js';

// The two sides of a diff, matched on the identity they share: each is glanced at for its
// shape, then read in order of the field chosen for it (a stored snapshot as it is when it is
// sorted by that field, anything else sorted on disk first).

/** One side of a diff before it is keyed: an export, or a stored snapshot in order by `sortedBy`. */
export type DiffSource =
  | { kind: 'export'; source: string | FileHandle; where: string }
  | { kind: 'snapshot'; handle: FileHandle; sortedBy: string; path: string; where: string };

/** A side's records in key order; `close` removes what sorting it left on disk. */
export interface KeyedSide {
  records: AsyncIterable<Keyed[]>;
  stats: KeyStats;
  close: () => void;
}

export interface Matched {
  match: Match;
  older: KeyedSide;
  newer: KeyedSide;
}

export interface MatchOptions {
  /** The field --key named; by default an id, else the username. */
  key?: string;
  /** Where a side that must be sorted spills its runs. */
  tempDir: string;
  signal?: AbortSignal;
}

/** Runs a step on one side; a record it cannot read is named with the side. */
async function onSide<T>(source: DiffSource, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (error instanceof NotARecord || error instanceof LineTooLong) error.message = `${source.where}: ${error.message}`;
    throw error;
  }
}

async function glimpseOf(source: DiffSource, key: string | undefined): Promise<Glimpse & { where: string }> {
  const lines = source.kind === 'export' ? exportLines(source.source) : lineBatches(await openText(source.handle));
  return { ...(await onSide(source, () => glimpse(lines, key))), where: source.where };
}

function keyedSide(source: DiffSource, field: string, options: MatchOptions): Promise<KeyedSide> {
  return onSide(source, () => openKeyed(source, field, options));
}

async function openKeyed(source: DiffSource, field: string, options: MatchOptions): Promise<KeyedSide> {
  if (source.kind === 'snapshot' && source.sortedBy === field) {
    const stats: KeyStats = { missingKey: 0, duplicates: 0 };
    return { records: snapshotRecords(source.handle, field, stats, source.path), stats, close: () => undefined };
  }
  const from = source.kind === 'export' ? source.source : source.handle;
  const { records, stats, discard } = await sortedExport(from, field, options.tempDir, options.signal);
  return { records, stats, close: discard };
}

/** Chooses the identity both sides share (an error when there is none) and opens them keyed by it. */
export async function matchSides(older: DiffSource, newer: DiffSource, options: MatchOptions): Promise<Matched> {
  const match = chooseMatch(await glimpseOf(older, options.key), await glimpseOf(newer, options.key), options.key);
  const a = await keyedSide(older, match.older, options);
  try {
    return { match, older: a, newer: await keyedSide(newer, match.newer, options) };
  } catch (error) {
    a.close();
    throw error;
  }
}

/** The diff of matched sides; matched by id, a same id under another username is a rename. */
export function diffMatched(matched: Matched, options: { changed: boolean; signal?: AbortSignal }, emit: (changes: Change[]) => Promise<void>): Promise<DiffCounts> {
  const { names } = matched.match;
  const readers = names && { older: keyReader(names.older), newer: keyReader(names.newer) };
  return diffSorted(matched.older.records, matched.newer.records, { ...options, names: readers }, emit);
}
