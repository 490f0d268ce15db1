import { accessSync, constants } from 'node:fs';
import type { JsonObject } from '../../core/classify.js';
import { ExitCode, SgqError } from '../../core/errors.js';
import { stringifyJson } from '../../core/json.js';
import { acquireLock, type LockOptions } from '../../fs/lock.js';
import { fileError } from '../../fs/file-errors.js';
import { sweepLeftovers } from '../../fs/sweep.js';
import type { Checkpoint } from '../run/checkpoint.js';
import type { Job, JobEnd } from '../run/jobs.js';
import { COMMIT_WAIT_MS, DatasetLayout, runId } from '../../core/dataset/layout.js';
import { openWriterLane, type WriterLane } from './writer-lane.js';
import type { WriterAnswer, WriterFailure, WriterRequest, WriterSetup } from './writer.js';
import type { Reporter } from '../stderr/reporter.js';
import type { StateOwner } from '../../core/service.js';
import { claimDataset } from '../../core/dataset/service-claim.js';

export interface DatasetOptions {
  dir: string;
  /** The service (and profile) whose records the run appends: a dataset holds one service's records. */
  owner: StateOwner;
  /** `namespace.route`, as in the service's path: graph.get_followers. */
  route: string;
  /** The run's start: `fetched_at` and `observed_at` of every record, and the day of its partition. */
  startedAt: Date;
  reporter: Pick<Reporter, 'warn' | 'error' | 'trace' | 'info'>;
  /** Stops the run: the dataset cannot take more records (a full disk). */
  stop: () => void;
  lockOptions: Omit<LockOptions, 'what' | 'waitMs'>;
  /** The writer thread's file; by default the one beside the bundle (none: the main thread). */
  workerFile?: string | null;
}

const WRITE_HINT = 'the --since-last marks and snapshots of this run were not advanced';
const OPEN_HINT = 'nothing was fetched (--dataset chooses another folder)';

/**
 * --dataset: the run's records (and with --snapshot --changes its churn events) appended to a
 * hive-partitioned Parquet dataset, as a checkpoint of the run (run/checkpoint.ts). It is opened
 * before the --since-last marks and the snapshots, so it commits first: a mark or a snapshot
 * never advances past records that did not reach the dataset. A commit seals the parts written
 * so far and renames them into place; a drop deletes them; a file appears whole or not at all.
 * The parts are written by a DatasetWriter in a worker thread (writer-lane.ts), fed each page's text.
 */
export class DatasetCheckpoint implements Checkpoint {
  private failure?: SgqError;
  private failureShown = false;
  /** Records or changes were sent since the last commit or drop. */
  private staged = false;

  private constructor(
    readonly layout: DatasetLayout,
    private readonly options: DatasetOptions,
    private readonly setup: WriterSetup,
    private lane: WriterLane,
    /** The writer's answer to creating the first part's file. */
    private readonly opened: Promise<WriterAnswer>,
  ) {}

  /** Checks the folder can be written (the writer creates a first part's file) before anything is fetched. */
  static async open(options: DatasetOptions): Promise<DatasetCheckpoint> {
    const dataset = await DatasetCheckpoint.start(options);
    try {
      await dataset.ready();
    } catch (error) {
      await dataset.close();
      throw error;
    }
    return dataset;
  }

  /**
   * Checks the folder and that it holds the records of the run's service (claiming it when it
   * names none yet), then starts the writer, which creates the first part's file while the
   * run opens the rest (a thread takes some 30-70 ms to start): ready() must be awaited before
   * the first request.
   */
  static async start(options: DatasetOptions): Promise<DatasetCheckpoint> {
    const layout = new DatasetLayout(options.dir);
    try {
      layout.makeFolder(layout.staging);
      accessSync(layout.root, constants.W_OK);
      // No lock is held here and other runs (other hosts too) write to staging: only this host's dead runs' files go.
      sweepLeftovers(layout.staging, undefined, { ownHostOnly: true });
    } catch (error) {
      throw datasetError(layout.root, error, OPEN_HINT);
    }
    const { startedAt, route, reporter } = options;
    try {
      await claimDataset(layout, options.owner, startedAt, options.lockOptions, (line) => reporter.info(line));
    } catch (error) {
      throw datasetError(layout.root, error, OPEN_HINT);
    }
    const setup = { root: layout.root, route, date: startedAt.toISOString().slice(0, 10), runId: runId(startedAt), startedAt: startedAt.toISOString() };
    const lane = await openWriterLane(setup, datasetWarning(reporter), options.workerFile);
    return new DatasetCheckpoint(layout, options, setup, lane, lane.send({ kind: 'open' }));
  }

  /**
   * Throws the one-line error if the writer could not create the first part's file. A thread
   * that could not start leaves the writing to the main thread: nothing was sent to it yet.
   */
  async ready(): Promise<void> {
    let { failure } = await this.opened;
    if (failure?.thread) {
      await this.lane.close();
      this.lane = await openWriterLane(this.setup, datasetWarning(this.options.reporter), null);
      ({ failure } = await this.lane.send({ kind: 'open' }));
    }
    if (failure) throw datasetError(this.layout.root, failure, OPEN_HINT);
    this.options.reporter.trace(`dataset: Parquet is written in ${this.lane.thread === 'worker' ? 'a worker thread' : 'the main thread'}`);
  }

  get what(): string {
    return `the dataset ${this.layout.root}`;
  }

  get pending(): boolean {
    return this.failure !== undefined || this.staged;
  }

  /** Commits ride along with the marks' and the snapshots': a dataset alone commits at the run's end. */
  get due(): boolean {
    return false;
  }

  /**
   * The hooks that send a job's records (and the changes its --snapshot --changes prints) to
   * the dataset: to a thread a page goes as its body's text, which the writer parses itself;
   * to a writer in this thread, as the records parsed. `sinceTonight`: the since of a
   * --full-every night between whole ones (its records are what came since), else undefined.
   */
  hooks(user: string | null, inner: Pick<Job, 'onRecords' | 'onEnd'>, sinceTonight: () => string | undefined = () => undefined): Pick<Job, 'onRecords' | 'onEnd'> {
    const { onRecords, onEnd } = inner;
    return {
      onRecords: async (records, lossless, page) => {
        const since = sinceTonight();
        // A writer in this thread takes the records as parsed; a thread, the page's text (it parses it again).
        if (records.length > 0) await this.send(this.lane.thread === 'main' ? { kind: 'parsed', user, since, records } : page ? { kind: 'page', user, since, ...page } : { kind: 'records', user, since, ndjson: ndjson(records) });
        await onRecords?.(records, lossless);
      },
      onEnd:
        onEnd &&
        (async (end: JobEnd) => {
          const emit: JobEnd['emit'] = async (records, lossless) => {
            if (records.length > 0) await this.send({ kind: 'changes', user, ndjson: ndjson(records) });
            await end.emit(records, lossless);
          };
          await onEnd({ ...end, emit });
        }),
    };
  }

  /** Hands records to the writer without waiting for it, unless it has no room (writer-lane.ts). */
  private async send(request: WriterRequest): Promise<void> {
    if (this.failure) return;
    this.staged = true;
    void this.lane.send(request).then((answer) => this.absorb(answer));
    await this.lane.room();
  }

  /** A write that failed (a full disk) stops the run; its line is shown once, at the commit or the drop. */
  private absorb({ failure }: WriterAnswer): void {
    if (!failure || this.failure) return;
    this.failure = datasetError(this.layout.root, failure, WRITE_HINT);
    this.options.stop();
  }

  commit(): Promise<void> {
    return this.cut()();
  }

  /**
   * The writer seals the pages sent before this instant (the cut), in the order of its
   * requests: a page another job sends from here on goes to the next part, which this commit
   * leaves in staging, and counts as staged for the next commit.
   */
  cut(): () => Promise<void> {
    this.staged = false;
    const sealed = this.lane.send({ kind: 'cut' });
    return () => this.commitCut(sealed);
  }

  private async commitCut(sealed: Promise<WriterAnswer>): Promise<void> {
    // Answered in order: every page sent before the cut is written (or failed) before the commit is judged.
    this.absorb(await sealed);
    if (this.failure) {
      this.failureShown = true;
      throw this.failure;
    }
    const lock = await acquireLock(this.layout.commitLock, { ...this.options.lockOptions, waitMs: COMMIT_WAIT_MS, what: `the dataset ${this.layout.root}` });
    try {
      const { failure } = await this.lane.send({ kind: 'commit' });
      if (failure) {
        this.staged = true;
        throw datasetError(this.layout.root, failure, WRITE_HINT);
      }
    } finally {
      lock.release();
    }
  }

  async drop(): Promise<void> {
    await this.lane.send({ kind: 'drop' });
    this.staged = false;
    if (this.failure && !this.failureShown) {
      this.failureShown = true;
      this.options.reporter.error(this.failure.message, this.failure.hint);
    }
  }

  async close(): Promise<void> {
    await this.drop();
    await this.lane.close();
  }
}

const ndjson = (records: readonly JsonObject[]): string => records.map((r) => `${stringifyJson(r)}\n`).join('');

/** The writer's warnings (a column left out, a value that does not fit), as the run shows them. */
const datasetWarning = (reporter: Pick<Reporter, 'warn'>) => (line: string) => reporter.warn(`dataset: ${line}`);

/** The dataset could not be written (a failure of the writer's thread, or of the main thread's own steps): exit 1, in the words of src/fs/file-errors.ts. */
function datasetError(root: string, error: unknown, then: string): SgqError {
  if (error instanceof SgqError) return error;
  // A writer's failure crossed from its thread as plain data (WriterFailure): its code and file are what the words need.
  const failure = error instanceof Error ? error : Object.assign(new Error((error as WriterFailure).message), error as WriterFailure);
  return fileError(failure, { what: `cannot write the dataset ${root}`, exitCode: ExitCode.internal, then });
}
