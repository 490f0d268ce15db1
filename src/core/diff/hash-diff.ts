import type { ChangeSink } from './change-order.js';
import type { KeyStats } from '../records/keyed.js';
import { keyText } from './byte-key.js';
import { sameBytes } from '../bytes.js';
import { FIRST, KEY_AT, KEY_LENGTH, markOf, SECOND, setMark, STRIDE, type KeyTable } from '../key-table.js';
import type { DiffCounts } from './merge-diff.js';
import { eachRecord, type OnRecord, type RecordSink } from './partitions.js';
import type { KeyOf } from '../records/record-key.js';

// The join of one partition of a hash diff: the older side's records of the partition held
// in one buffer and a table of their keys; the newer side's records probe it one by one.

/** Marks of a table slot: an older record not yet matched, or a key the newer side has shown. */
const UNMATCHED = 1;
const SEEN = 2;
/** A slot for a key only the newer side has: its record is not kept. */
const NO_RECORD = -1;

/** What a join needs to know about the two sides, and where its results go. */
export interface JoinContext {
  /** The username fields, when matching by id: a same id under another username is a rename. */
  names?: { older: KeyOf; newer: KeyOf };
  stats: { older: KeyStats; newer: KeyStats };
  counts: DiffCounts;
  changes: ChangeSink;
  /** Whether `changed` records are printed (`--changed`); they are counted either way. */
  printChanged: boolean;
}

/** Puts the older records of a partition into its table. */
class TableFill implements RecordSink {
  constructor(
    private readonly table: KeyTable,
    private readonly stats: KeyStats,
  ) {}

  record(_line: Buffer, ls: number, le: number, key: Buffer, ks: number, ke: number, hash: number): void {
    // The first record of a key is kept: a key twice is a page boundary that moved.
    const at = this.table.find(key, ks, ke, hash);
    if (at >= 0) this.stats.duplicates++;
    else this.table.put(at, key, ks, ke, hash, ls, le, UNMATCHED);
  }
}

/** The join of one partition; its records of the newer side probe it one by one (`record`). */
export class PartitionJoin implements RecordSink {
  private readonly table: KeyTable;

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
    table.reset(records + (records >> 2), older);
    eachRecord(older, new TableFill(table, context.stats.older));
  }

  /** Matches one record of the newer side, as a callback (the newer side's records of partition 0, as they are read). */
  readonly probe: OnRecord = (line, ls, le, key, ks, ke, hash) => this.record(line, ls, le, key, ks, ke, hash);

  /** Matches one record of the newer side. */
  record(line: Buffer, ls: number, le: number, key: Buffer, ks: number, ke: number, hash: number): void {
    const { table, context } = this;
    const at = table.find(key, ks, ke, hash);
    if (at < 0) {
      table.put(at, key, ks, ke, hash, NO_RECORD, NO_RECORD, SEEN);
      context.counts.gained++;
      context.changes.push(keyText(key, ks, ke), 'gained', line.toString('utf8', ls, le));
      return;
    }
    const { cells } = table;
    if (markOf(cells, at) === SEEN) {
      context.stats.newer.duplicates++;
      return;
    }
    setMark(cells, at, SEEN);
    const os = cells[at + FIRST]!;
    const oe = cells[at + SECOND]!;
    if (oe - os === le - ls && sameBytes(this.older, os, line, ls, le - ls)) context.counts.unchanged++;
    else this.changed(keyText(key, ks, ke), this.older.toString('utf8', os, oe), line.toString('utf8', ls, le));
  }

  /** Lines that differ: a rename when matched by id and the usernames differ, else a change. */
  private changed(key: string, older: string, newer: string): void {
    const { names, counts, changes } = this.context;
    const before = names?.older(older);
    const after = names?.newer(newer);
    if (before !== undefined && after !== undefined && before !== after) {
      counts.renamed++;
      changes.push(key, 'renamed', newer, before);
    } else {
      counts.changed++;
      if (this.context.printChanged) changes.push(key, 'changed', newer);
    }
  }

  /** The older records no newer one matched: lost. Pushed in batches, flushed between them. */
  async lost(): Promise<void> {
    const { table, context, older } = this;
    const { cells } = table;
    for (let at = 0; at < cells.length; at += STRIDE) {
      if (markOf(cells, at) !== UNMATCHED) continue;
      const ks = cells[at + KEY_AT]!;
      context.counts.lost++;
      context.changes.push(keyText(older, ks, ks + cells[at + KEY_LENGTH]!), 'lost', older.toString('utf8', cells[at + FIRST], cells[at + SECOND]));
      if (context.counts.lost % 1000 === 0) await context.changes.flush();
    }
  }
}
