import type { ChangeSink } from './change-order.js';
import type { KeyStats } from './keyed.js';
import { KeyTable } from './key-table.js';
import type { DiffCounts } from './merge-diff.js';
import { eachRecord, type OnRecord } from './partitions.js';
import type { KeyOf } from './record-key.js';

// The join of one partition of a hash diff: the older side's records of the partition held
// in one buffer and a table of their keys; the newer side's records probe it one by one.

/** Marks of a table entry: an older record not yet matched, or a key the newer side has shown. */
const SEEN = 1;
/** An entry for a key only the newer side has: its record is not kept. */
const NO_RECORD = -1;

/** What a join needs to know about the two sides, and where its results go. */
export interface JoinContext {
  /** Each side's key field, read from a line as text: the order of the output. */
  keys: { older: KeyOf; newer: KeyOf };
  /** The username fields, when matching by id: a same id under another username is a rename. */
  names?: { older: KeyOf; newer: KeyOf };
  stats: { older: KeyStats; newer: KeyStats };
  counts: DiffCounts;
  changes: ChangeSink;
  /** Whether `changed` records are printed (`--changed`); they are counted either way. */
  printChanged: boolean;
}

export class PartitionJoin {
  private readonly table: KeyTable;
  /** Keys first seen on the newer side, copied: the buffers they came in are reused. */
  private arena = Buffer.allocUnsafe(0);
  private arenaUsed = 0;

  constructor(
    /** The older side's records of this partition (partitions.ts' form). */
    private readonly older: Buffer,
    /** How many records it holds: the table is sized for them and the keys the newer side adds. */
    records: number,
    private readonly context: JoinContext,
    /** The table of the previous partition, emptied and used again. */
    table: KeyTable,
  ) {
    this.table = table;
    table.reset(records + (records >> 2));
    const stats = context.stats.older;
    eachRecord(older, (_line, ls, le, key, ks, ke, hash) => {
      // The first record of a key is kept: a key twice is a page boundary that moved.
      if (table.findOrAdd(key, ks, ke, hash, ls, le) >= 0) stats.duplicates++;
    });
  }

  /** Matches one record of the newer side. */
  readonly probe: OnRecord = (line, ls, le, key, ks, ke, hash) => {
    const { table, context } = this;
    const entry = table.find(key, ks, ke, hash);
    if (entry < 0) {
      table.add(this.keep(key, ks, ke), this.arenaUsed - (ke - ks), this.arenaUsed, hash, NO_RECORD, NO_RECORD);
      table.marks[table.size - 1] = SEEN;
      context.counts.gained++;
      const text = line.toString('utf8', ls, le);
      context.changes.push(this.keyText(context.keys.newer, text), 'gained', text);
      return;
    }
    if (table.marks[entry] === SEEN) {
      context.stats.newer.duplicates++;
      return;
    }
    table.marks[entry] = SEEN;
    const os = table.firsts[entry]!;
    const oe = table.seconds[entry]!;
    if (oe - os === le - ls && sameLine(this.older, os, line, ls, le - ls)) context.counts.unchanged++;
    else this.changed(this.older.toString('utf8', os, oe), line.toString('utf8', ls, le));
  };

  /** Lines that differ: a rename when matched by id and the usernames differ, else a change. */
  private changed(older: string, newer: string): void {
    const { names, counts, changes, keys } = this.context;
    const before = names?.older(older);
    const after = names?.newer(newer);
    if (before !== undefined && after !== undefined && before !== after) {
      counts.renamed++;
      changes.push(this.keyText(keys.newer, newer), 'renamed', newer, before);
    } else {
      counts.changed++;
      if (this.context.printChanged) changes.push(this.keyText(keys.newer, newer), 'changed', newer);
    }
  }

  /** The older records no newer one matched: lost. Pushed in batches, flushed between them. */
  async lost(): Promise<void> {
    const { table, context } = this;
    for (let entry = 0; entry < table.size; entry++) {
      if (table.marks[entry] === SEEN || table.firsts[entry] === NO_RECORD) continue;
      const text = this.older.toString('utf8', table.firsts[entry], table.seconds[entry]);
      context.counts.lost++;
      context.changes.push(this.keyText(context.keys.older, text), 'lost', text);
      if (context.counts.lost % 1000 === 0) await context.changes.flush();
    }
  }

  private keyText(key: KeyOf, line: string): string {
    return key(line)!;
  }

  /** Copies a key into the arena; returns the arena (it ends the copy). */
  private keep(key: Buffer, ks: number, ke: number): Buffer {
    const length = ke - ks;
    if (this.arenaUsed + length > this.arena.length) {
      this.arena = Buffer.allocUnsafe(Math.max(64 * 1024, length));
      this.arenaUsed = 0;
    }
    key.copy(this.arena, this.arenaUsed, ks, ke);
    this.arenaUsed += length;
    return this.arena;
  }
}

/**
 * Whether two lines are the same bytes. A record line is short: a loop costs less than
 * Buffer#compare's call into C++ (a sixth of a partition's probe in the profile).
 */
function sameLine(a: Buffer, at: number, b: Buffer, bt: number, length: number): boolean {
  if (length > 256) return a.compare(b, bt, bt + length, at, at + length) === 0;
  for (let i = length - 1; i >= 0; i--) if (a[at + i] !== b[bt + i]) return false;
  return true;
}
