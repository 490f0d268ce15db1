import { startThread, threadLane, type Lane } from '../../threads/lane.js';
import { JsonTooDeep } from '../json.js';
import type { ChangeOrder } from './change-order.js';
import { LineTooLong } from '../records/lines.js';
import type { DiffCounts } from './merge-diff.js';
import { partitionPath, Partitions } from './partitions.js';
import { NotARecord } from '../records/record-key.js';
import type { ScannedSide } from './side-scan.js';
import { removeFile } from '../../fs/remove.js';

// The second core of a hash diff: a worker thread (diff-worker.ts, built as dist/diff-worker.cjs,
// on the lane of src/threads/lane.ts) reads the older side into partitions while this thread
// reads the newer one, then joins the partitions with this thread, each taking the next one
// not taken (a counter both share).
// Every file the worker writes is named here beforehand, so that this thread removes them
// whatever becomes of the worker (an error, a stop, a signal).

/** What the worker is started with. */
export interface LaneJob {
  older: Pick<ScannedSide, 'isExport' | 'field' | 'where'> & { source: string };
  newerField: string;
  names?: { older: string; newer: string };
  printChanged: boolean;
  /**
   * Characters of changes the worker holds and sorts itself before it hands them over as they
   * come (held-changes.ts): what the main thread's sort holds before it spills (RUN_CHARS, by
   * the main thread's heap, which `--max-old-space-size` may cap); tests make it tiny.
   */
  holdChars: number;
  size: number;
  dir: string;
  /** One file a partition of the older side. */
  paths: string[];
  /** The index into `order` of the next partition to join: both threads take from it. */
  next: SharedArrayBuffer;
}

/** Sizes of sealed partitions, as a thread hands them to the other. */
export interface PartSizes {
  paths: (string | undefined)[];
  sizes: { bytes: number; records: number }[];
}

/** The requests, answered in turn: read the older side, then join a share of the partitions. */
export type ToWorker = { kind: 'scan' } | { kind: 'join'; newer: PartSizes; order: number[] };

export type FromWorker =
  | { kind: 'scanned'; older: PartSizes; missingKey: number }
  | { kind: 'joined'; counts: DiffCounts; duplicates: { older: number; newer: number }; held: string[] }
  | { kind: 'error'; name: string; message: string };

/**
 * The worker's notes: its batches of changes as they come (encoded for the ChangeOrder), in
 * the lane's window, acknowledged once in the sort: the worker keeps at most 2 Mi characters
 * of changes unacknowledged (diff-worker.ts), so that neither heap holds more.
 */
export type ChangesNote = string[];

type DiffThread = Lane<ToWorker, FromWorker, ChangesNote>;

const NAME = 'the worker thread of a hash diff';

export class DiffLane {
  private readonly next: Int32Array;
  /** The older side's partitions, and its records without a key, once the worker has read it. */
  readonly scanned: Promise<{ parts: Partitions; missingKey: number }>;
  /** The worker's counts and duplicates, once it has joined its share (join() sends it). */
  joined: Promise<Extract<FromWorker, { kind: 'joined' }>> = new Promise(() => undefined);
  /** Rejects with what broke the handing over of changes. */
  private readonly failed: Promise<never>;

  /** The lane with the worker started (the built `script`, or a path), or undefined if no thread starts: then this thread does all. */
  static start(job: LaneJob, changes: ChangeOrder, script = 'diff-worker.cjs'): DiffLane | undefined {
    // A small young generation, as --jq's thread has: its garbage is short lines, a chunk at a time.
    const thread = startThread({ script, name: NAME, data: job, limits: { maxYoungGenerationSizeMb: 4 } });
    return thread && new DiffLane(threadLane(thread, NAME), job, changes);
  }

  private constructor(
    private readonly lane: DiffThread,
    private readonly job: LaneJob,
    private readonly changes: ChangeOrder,
  ) {
    this.next = new Int32Array(job.next);
    this.failed = new Promise<never>((_, reject) => {
      // Handed to the sort, which spills past its bound, and only then acknowledged: posted
      // freely, the changes of 300,000 x 300,000 different accounts ran a 32 MiB heap out
      // as they were read (test/e2e/churn.test.ts).
      lane.onNote = (lines) => {
        changes.pushEncoded(lines);
        const flushed = changes.flush();
        flushed.catch(reject);
        return flushed;
      };
    });
    this.scanned = this.ask({ kind: 'scan' }, 'scanned').then((m) => ({ parts: Partitions.written(job.dir, m.older.paths, m.older.sizes), missingKey: m.missingKey }));
    for (const p of [this.scanned, this.failed]) p.catch(() => undefined);
  }

  /** A request's answer of `kind`, or the worker's error as this thread's own. */
  private ask<K extends FromWorker['kind']>(request: ToWorker, kind: K): Promise<Extract<FromWorker, { kind: K }>> {
    const answered = this.lane.send(request).then((m) => {
      if (m.kind === 'error' || m.kind !== kind) throw m.kind === 'error' ? rebuilt(m) : new Error(`${NAME} answered ${m.kind}`);
      return m as Extract<FromWorker, { kind: K }>;
    });
    return Promise.race([this.failed, answered]);
  }

  /** Lets the worker join its share of `order`, the partitions it may take, whose newer records are spilled. */
  join(newer: Partitions, order: number[]): void {
    const sizes: PartSizes = { paths: newer.parts.map((p) => p.path), sizes: newer.parts.map((p) => ({ bytes: p.bytes, records: p.records })) };
    this.joined = this.ask({ kind: 'join', newer: sizes, order }, 'joined').then(async (m) => {
      await this.changes.flush();
      this.changes.pushSorted(m.held);
      return m;
    });
    this.joined.catch(() => undefined);
  }

  /** The next partition of `order` for this thread to join, or undefined when all are taken. */
  take(order: number[]): number | undefined {
    return order[Atomics.add(this.next, 0, 1)];
  }

  /** Ends the worker and removes every file it was to write. */
  async stop(): Promise<void> {
    await this.lane.close();
    for (const path of this.job.paths) removeFile(path);
  }
}

/** A new job's shared parts: the files of the older side's partitions, and the counter. */
export const laneFiles = (count: number, dir: string) => ({ paths: Array.from({ length: count }, () => partitionPath(dir)), next: new SharedArrayBuffer(4) });

/** The worker's error as this thread's own, so that it is told as one from here would be. */
function rebuilt({ name, message }: { name: string; message: string }): Error {
  const error = name === 'NotARecord' ? new NotARecord(message) : name === 'LineTooLong' ? new LineTooLong(0) : name === 'JsonTooDeep' ? new JsonTooDeep() : new Error(message);
  error.message = message;
  return error;
}

/** An error's kind as the worker posts it: by class, not by name (a bundle may rename classes). */
export const errorKind = (error: unknown) => (error instanceof NotARecord ? 'NotARecord' : error instanceof LineTooLong ? 'LineTooLong' : error instanceof JsonTooDeep ? 'JsonTooDeep' : 'Error');
