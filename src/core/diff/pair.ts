import type { FileHandle } from 'node:fs/promises';
import { chooseMatch, type Glimpse, type Match } from '../records/identity.js';
import type { Keyed, KeyStats } from '../records/keyed.js';
import { LineTooLong, lineBatches, openText } from '../records/lines.js';
import { diffSorted, type Change, type DiffCounts } from './merge-diff.js';
import { diffHeld } from './held-diff.js';
import { diffStored } from './stored-diff.js';
import type { StoredSource } from './stored-side.js';
import type { LineBytes } from '../records/line-bytes.js';
import { NotARecord, keyReader } from '../records/record-key.js';
import { exportLines, glimpse, headGlimpse, snapshotRecords } from '../records/sources.js';
import { diffUnsorted, type UnsortedSide } from './unsorted-diff.js';

// The two sides of a diff, matched on the identity they share: each is glanced at for its
// shape, then diffed: by a merge when both are snapshots stored in order of the field chosen
// (of their bytes when both are read from their files), else by a hash join.

/**
 * One side of a diff before it is keyed: an export, or a stored snapshot in order by
 * `sortedBy`; with `inOrder`, the snapshot's records as they are in its file, keyed by
 * `sortedBy`, held in memory with their bytes (one just staged): read instead of the file.
 */
export type DiffSource =
  | { kind: 'export'; source: string | FileHandle; where: string }
  | { kind: 'snapshot'; handle: FileHandle; sortedBy: string; path: string; where: string; inOrder?: LineBytes };

/** One side of a diff with the field chosen to key it, and what keying it left out. */
export interface MatchedSide {
  source: DiffSource;
  field: string;
  stats: KeyStats;
}

export interface Matched {
  match: Match;
  older: MatchedSide;
  newer: MatchedSide;
  /** Where a diff of sides not in key order spills. */
  tempDir: string;
}

export interface MatchOptions {
  /** The field --key named; by default an id, else the username. */
  key?: string;
  /** Where a diff of sides not in key order spills its partitions. */
  tempDir: string;
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

/** Lines of a held export decoded at a time for its glimpse, which mostly reads the first. */
const GLANCE = 16;

async function glimpseOf(source: DiffSource, key: string | undefined): Promise<Glimpse & { where: string }> {
  const head = source.kind === 'snapshot' && !source.inOrder ? await onSide(source, () => headGlimpse(source.handle, key)) : undefined;
  if (head) return { ...head, where: source.where };
  const lines = source.kind === 'export' ? exportLines(source.source) : source.inOrder ? linesOf(source.inOrder.batches(GLANCE)) : lineBatches(await openText(source.handle));
  return { ...(await onSide(source, () => glimpse(lines, key))), where: source.where };
}

/** Chooses the identity both sides share (an error when there is none). */
export async function matchSides(older: DiffSource, newer: DiffSource, options: MatchOptions): Promise<Matched> {
  const match = chooseMatch(await glimpseOf(older, options.key), await glimpseOf(newer, options.key), options.key);
  const side = (source: DiffSource, field: string): MatchedSide => ({ source, field, stats: { missingKey: 0, duplicates: 0 } });
  return { match, older: side(older, match.older), newer: side(newer, match.newer), tempDir: options.tempDir };
}

/**
 * The diff of matched sides; matched by id, a same id under another username is a rename.
 * Two snapshots stored in order of the chosen field are merged as they are read; anything
 * else is joined by hash (unsorted-diff.ts). Either way the changes come in key order.
 */
export function diffMatched(matched: Matched, options: { changed: boolean; signal?: AbortSignal; thread?: boolean }, emit: (changes: Change[]) => Promise<void>): Promise<DiffCounts> {
  const { names } = matched.match;
  const { older, newer } = matched;
  if (inOrder(older) && inOrder(newer)) {
    const readers = names && { older: keyReader(names.older), newer: keyReader(names.newer) };
    const held = heldSide(older, newer);
    if (held) return diffHeld(held.bytes, held.newer, { ...options, names: readers, olderKey: keyReader(older.field), stats: older.stats, where: held.where }, emit);
    const [a, b] = [storedSource(older), storedSource(newer)];
    if (a && b) return diffStored(a, b, { ...options, names: readers }, emit);
    return diffSorted(inOrderRecords(older), inOrderRecords(newer), { ...options, names: readers }, emit);
  }
  return diffUnsorted(unsorted(older), unsorted(newer), { ...options, names, tempDir: matched.tempDir }, emit);
}

const inOrder = (side: MatchedSide) => side.source.kind === 'snapshot' && side.source.sortedBy === side.field;

function inOrderRecords(side: MatchedSide): AsyncGenerator<Keyed[]> {
  const source = side.source as Extract<DiffSource, { kind: 'snapshot' }>;
  return source.inOrder ? source.inOrder.batches() : snapshotRecords(source.handle, side.field, side.stats, source.path);
}

/** A stored snapshot's bytes, gunzipped, its file opened for reading when they are first asked for. */
async function* storedBytes(handle: FileHandle): AsyncGenerator<Buffer> {
  yield* (await openText(handle)) as AsyncIterable<Buffer>;
}

/** A side read from its stored file (none held in memory). */
function storedSource(side: MatchedSide): StoredSource | undefined {
  const source = side.source as Extract<DiffSource, { kind: 'snapshot' }>;
  if (source.inOrder) return undefined;
  return { bytes: storedBytes(source.handle), field: side.field, stats: side.stats, where: source.path };
}

/** A stored older side against a newer one held in memory: the older one's bytes, split, compared and keyed as they are merged (held-diff.ts). */
function heldSide(older: MatchedSide, newer: MatchedSide): { bytes: AsyncIterable<Buffer>; newer: LineBytes; where: string } | undefined {
  const [a, b] = [older.source, newer.source] as Extract<DiffSource, { kind: 'snapshot' }>[];
  if (a!.inOrder || !b!.inOrder) return undefined;
  return { bytes: storedBytes(a!.handle), newer: b!.inOrder, where: a!.path };
}

async function* linesOf(batches: AsyncIterable<Keyed[]>): AsyncGenerator<string[]> {
  for await (const batch of batches) yield batch.map((item) => item.line);
}

function unsorted(side: MatchedSide): UnsortedSide {
  const { source, field, stats } = side;
  const from = source.kind === 'export' ? source.source : source.handle;
  return { source: from, isExport: source.kind === 'export', field, stats, where: source.where };
}
