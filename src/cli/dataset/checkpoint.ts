import { accessSync, constants, mkdirSync } from 'node:fs';
import type { JsonObject } from '../../core/classify.js';
import { ExitCode, SgqError } from '../../core/errors.js';
import { acquireLock, type LockOptions } from '../../fs/lock.js';
import { sweepLeftovers } from '../../fs/sweep.js';
import type { Checkpoint } from '../run/checkpoint.js';
import type { Job, JobEnd } from '../run/runner.js';
import { COMMIT_WAIT_MS, DatasetLayout, runId, type Kind } from './layout.js';
import { loadParquet } from '../output/parquet.js';
import { DatasetStream } from './stream.js';
import type { Reporter } from '../output/reporter.js';

export interface DatasetOptions {
  dir: string;
  /** `namespace.route`, as in the service's path: graph.get_followers. */
  route: string;
  /** The run's start: `fetched_at` and `observed_at` of every record, and the day of its partition. */
  startedAt: Date;
  reporter: Pick<Reporter, 'warn' | 'error'>;
  /** Stops the run: the dataset cannot take more records (a full disk). */
  stop: () => void;
  lockOptions: Omit<LockOptions, 'what' | 'waitMs'>;
}

/**
 * --dataset: the run's records (and with --snapshot --changes its churn events) appended to a
 * hive-partitioned Parquet dataset, as a checkpoint of the run (checkpoint.ts). It is opened
 * before the --since-last marks and the snapshots, so it commits first: a mark or a snapshot
 * never advances past records that did not reach the dataset. A commit seals the parts written
 * so far and renames them into place; a drop deletes them; a file appears whole or not at all.
 */
export class DatasetCheckpoint implements Checkpoint {
  private readonly streams: Record<Kind, DatasetStream>;
  private readonly fetchedAt: string;
  private failure?: SgqError;
  private failureShown = false;

  private constructor(
    readonly layout: DatasetLayout,
    private readonly options: DatasetOptions,
  ) {
    const date = options.startedAt.toISOString().slice(0, 10);
    const id = runId(options.startedAt);
    const place = (kind: Kind) => ({ layout, kind, route: options.route, date, runId: id });
    const warn = (line: string) => options.reporter.warn(`dataset: ${line}`);
    this.streams = { records: new DatasetStream(place('records'), warn), changes: new DatasetStream(place('changes'), warn) };
    this.fetchedAt = options.startedAt.toISOString();
  }

  /** Checks the folder can be written (a first part's file is created) before anything is fetched. */
  static async open(options: DatasetOptions): Promise<DatasetCheckpoint> {
    await loadParquet();
    const layout = new DatasetLayout(options.dir);
    const dataset = new DatasetCheckpoint(layout, options);
    try {
      mkdirSync(layout.staging, { recursive: true });
      accessSync(layout.root, constants.W_OK);
      // No lock is held here and other runs (other hosts too) write to staging: only this host's dead runs' files go.
      sweepLeftovers(layout.staging, undefined, { ownHostOnly: true });
      dataset.streams.records.open();
    } catch (error) {
      throw datasetError(layout.root, error, 'check that it is a folder you can write, or choose another with --dataset; nothing was fetched');
    }
    return dataset;
  }

  get what(): string {
    return `the dataset ${this.layout.root}`;
  }

  get pending(): boolean {
    return this.failure !== undefined || this.streams.records.pending || this.streams.changes.pending;
  }

  /** Commits ride along with the marks' and the snapshots': a dataset alone commits at the run's end. */
  get due(): boolean {
    return false;
  }

  /** The hooks that send a job's records (and the changes its --snapshot --changes prints) to the dataset. */
  hooks(user: string | null, inner: Pick<Job, 'onRecords' | 'onEnd'>): Pick<Job, 'onRecords' | 'onEnd'> {
    const { onRecords, onEnd } = inner;
    return {
      onRecords: async (records, lossless) => {
        this.add('records', records.map((r) => ({ query_user: user, fetched_at: this.fetchedAt, ...r })));
        await onRecords?.(records, lossless);
      },
      onEnd:
        onEnd &&
        (async (end: JobEnd) => {
          const emit: JobEnd['emit'] = async (records, lossless) => {
            this.add('changes', records.map((r) => ({ change: r.change ?? null, ...r, query_user: user, observed_at: this.fetchedAt })));
            await end.emit(records, lossless);
          };
          await onEnd({ ...end, emit });
        }),
    };
  }

  private add(kind: Kind, records: JsonObject[]): void {
    if (this.failure || records.length === 0) return;
    try {
      this.streams[kind].add(records);
    } catch (error) {
      this.failure = datasetError(this.layout.root, error, 'check free space and permissions; the --since-last marks and snapshots of this run were not advanced');
      this.options.stop();
    }
  }

  async commit(): Promise<void> {
    if (this.failure) {
      this.failureShown = true;
      throw this.failure;
    }
    const lock = await acquireLock(this.layout.commitLock, { ...this.options.lockOptions, waitMs: COMMIT_WAIT_MS, what: `the dataset ${this.layout.root}` });
    try {
      this.streams.records.commit();
      this.streams.changes.commit();
    } catch (error) {
      throw datasetError(this.layout.root, error, 'check free space and permissions; the --since-last marks and snapshots of this run were not advanced');
    } finally {
      lock.release();
    }
  }

  async drop(): Promise<void> {
    this.streams.records.drop();
    this.streams.changes.drop();
    if (this.failure && !this.failureShown) {
      this.failureShown = true;
      this.options.reporter.error(this.failure.message, this.failure.hint);
    }
  }

  async close(): Promise<void> {
    await this.drop();
  }
}

function datasetError(root: string, error: unknown, hint: string): SgqError {
  if (error instanceof SgqError) return error;
  const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
  return new SgqError(ExitCode.internal, `cannot write the dataset ${root}: ${code}`, hint);
}
