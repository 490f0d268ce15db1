import { setMaxListeners } from 'node:events';
import type { ApiClient } from '../../core/client.js';
import type { ResolvedConfig } from '../../core/config.js';
import { proxyFor } from '../../core/proxy.js';
import type { CommandContext } from '../program/context.js';
import type { Format } from '../formats/formats.js';
import { claimOutput, openOutput, outLockOptions, type Output, type OutputChoice } from '../output/pipeline.js';
import type { Reporter } from '../stderr/reporter.js';
import { connect, openCache, type Connection } from './connection.js';
import { DEFAULT_TIMEOUT_MS, type TypedSettings } from '../../core/settings.js';
import { waitWords } from '../../core/wait-words.js';
import { runPacer, type RunPacer } from './pacing.js';
import { Checkpoints } from './checkpoint.js';
import type { LockOptions } from '../../fs/lock.js';
import { openFileLimit } from '../../fs/file-errors.js';
import type { Held, OutputFlags, Plan } from './plan.js';
import type { FileCache } from './response-cache.js';
import { SinceMarks } from './since-marks.js';
import { TraceFile } from './trace-file.js';
import { usageError } from '../../core/errors.js';
import type { DatasetOptions } from '../dataset/dataset-checkpoint.js';
import type { ChurnSetup } from '../snapshots/open-notifier.js';

// A run's scope opens, in one fixed order, everything the run holds (the locks, the
// connection, the output, the checkpoints, the client) and closes it in the reverse order,
// whatever happens. It is the one place that applies the commit rule of checkpoint.ts:
// checkpoints commit only once the output holding what they claim is durable, and drop
// otherwise.

/** How the records are shaped; the format (and the bigint-as-string setting) once the config is known. */
type Choice = Omit<OutputChoice, 'format' | 'bigintAsString'> & { format: (config: ResolvedConfig) => OutputChoice['format']; bigintAsString: (config: ResolvedConfig) => boolean };

export class RunScope {
  private readonly closers: (() => Promise<void> | void)[] = [];
  private finished = false;
  readonly checkpoints = new Checkpoints();
  readonly controller = new AbortController();
  held!: Held;
  config!: ResolvedConfig;
  connection!: Connection;
  /** The profile's numbers (parallel, warn-credits, cache), typed once. */
  settings!: TypedSettings;
  /** Pages of one user's --all in flight at once: --parallel, else the setting, else 1. */
  parallel = 1;
  output!: Output;
  /** The format the records are written in, chosen once the config is known. */
  format!: Format;
  client!: ApiClient;
  trace?: TraceFile;
  cache?: FileCache;
  /** Paces a trial account's calls (the plan), and learns of its refusals. */
  pacer!: RunPacer;

  private constructor(readonly reporter: Reporter) {
    // Every user in flight may wait on it (a retry's backoff, the budget): many listeners, no leak.
    setMaxListeners(0, this.controller.signal);
  }

  /** Opens everything the plan needs, or closes what it had opened and throws. */
  static async open(ctx: CommandContext, plan: Plan, flags: OutputFlags, choice: Choice, reporter: Reporter): Promise<RunScope> {
    const scope = new RunScope(reporter);
    try {
      await scope.openAll(ctx, plan, flags, choice);
      return scope;
    } catch (error) {
      await scope.close();
      throw error;
    }
  }

  private async openAll(ctx: CommandContext, plan: Plan, flags: OutputFlags, choice: Choice): Promise<void> {
    const { io } = ctx;
    const lockOptions = outLockOptions(flags.waitLock, io.signal, this.reporter);
    this.stopOnSignal(io.signal);
    // 1. Locks: one run at a time per file replaced and per state file.
    if (flags.trace !== undefined) this.defer((this.trace = TraceFile.open(flags.trace)), (t) => t.close());
    const out = await claimOutput(flags.out, lockOptions);
    this.defer(out, (o) => o.release());
    this.config = ctx.config;
    this.settings = await ctx.settings();
    const cacheMs = flags.cache?.ms ?? this.settings.cacheMs;
    // 2. The connection (nothing sent yet): whose state the checkpoints below read and change.
    // A loopback address is asked whether it is a sandbox only by runs that keep such state.
    const keepsState = plan.marksFile !== undefined || plan.snapshots !== undefined || datasetDir(plan, this.config) !== undefined || cacheMs !== undefined;
    // Runs that hold files per user read the limit of open files now (0.1 ms): once it is met,
    // /proc may not open any more, and the line that says so names it (src/fs/file-errors.ts).
    if (plan.snapshots !== undefined || datasetDir(plan, this.config) !== undefined) openFileLimit();
    this.connection = await connect(ctx, plan.needsKey, { identify: keepsState });
    // From here on the key may come back in what the service says: every line masks it (and the notify URL, a secret too).
    const notify = plan.snapshots && (plan.snapshots.notify ?? this.config.notify);
    this.reporter.maskSecrets([this.connection.apiKey, notify]);
    this.defer(this.connection, (c) => c.close());
    const { owner } = this.connection;
    // Closed whatever else fails to open: the marks below hold the state file's lock.
    this.defer(this.checkpoints, (c) => c.close());
    if (plan.snapshots !== undefined || datasetDir(plan, this.config) !== undefined) await io.setV8Flags?.(KEEPING_HEAP);
    // The dataset first: it commits before the marks and snapshots that claim its records were kept.
    const dataset = await openDataset(plan, flags, this.config, { owner, reporter: this.reporter, stop: () => this.controller.abort('fatal'), lockOptions });
    if (dataset) this.checkpoints.add(dataset);
    const marks = plan.marksFile && this.checkpoints.add(await SinceMarks.open(plan.marksFile(this.config), owner, lockOptions));
    // The output (a proxy variable sgq cannot use ends the run before --out is touched).
    const proxy = proxyFor(io.env, new URL(this.connection.baseUrl));
    const stop = () => this.controller.abort('output closed');
    this.format = choice.format(this.config);
    this.output = await openOutput(io, out.target, { ...choice, format: this.format, bigintAsString: choice.bigintAsString(this.config) }, this.reporter, stop);
    // A scope that closes before its finish (a later step failed to open) keeps nothing half-made.
    this.defer(this.output, async (o) => void (this.finished || (await o.sink.finish(false))));
    const attemptMs = ctx.globals.timeout !== undefined ? ctx.globals.timeout * 1000 : (this.settings.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    // 3. The checkpoints still to open: the snapshot store is checked before anything is fetched.
    const churn = plan.snapshots && { ...plan.snapshots, notify, label: plan.label, startedAt: plan.startedAt, attemptMs, retries: ctx.globals.retries ?? this.settings.retries, trace: this.trace };
    const snapshots = churn && this.checkpoints.add(await openSnapshots(churn, ctx, this.connection, { ...lockOptions, warn: (line) => this.reporter.warn(line) }, this.reporter));
    this.held = { marks, snapshots, dataset, reporter: this.reporter };
    // 4. The client, last: from here on requests may be sent (once the dataset's first part exists).
    await dataset?.ready();
    this.cache = await openCache(io.env, cacheMs, this.connection);
    const concurrency = Math.max(1, plan.concurrency);
    const parallel = (this.parallel = plan.parallel ?? this.settings.parallel ?? 1);
    const { maxWait } = flags;
    const now = () => (io.now ? io.now().getTime() : Date.now());
    this.pacer = runPacer(io.env, this.config, owner, { attemptMs, now, reporter: this.reporter });
    this.client = await ctx.client(this.connection, {
      proxy,
      connections: concurrency * parallel,
      manyCalls: plan.manyCalls,
      maxWaitMs: maxWait?.ms,
      signal: this.controller.signal,
      hooks: this.trace ? [this.trace.hooks()] : [],
      cache: this.cache,
      pacer: this.pacer,
      onLongWait: (ms, why) => this.reporter.waiting(ms, `${why}; waiting ${waitWords(ms)} for it, ${maxWait ? `as --max-wait ${maxWait.text} allows` : 'as the service asks'}`),
    });
    this.defer(this.client, (c) => c.close());
  }

  /** SIGINT and SIGTERM stop everything in flight. */
  private stopOnSignal(signal: AbortSignal | undefined): void {
    if (!signal) return;
    const onSignal = () => this.controller.abort(signal.reason);
    signal.addEventListener('abort', onSignal, { once: true });
    this.closers.push(() => signal.removeEventListener('abort', onSignal));
    if (signal.aborted) onSignal();
  }

  private defer<T>(thing: T, close: (thing: T) => Promise<void> | void): void {
    this.closers.push(() => close(thing));
  }

  /**
   * While output streams (stdout, a FIFO), what a finished job staged is committed as soon as
   * everything written so far has left sgq without an error; a file commits at its rename.
   * Once a commit has failed, returns the users whose staged results it dropped
   * (Checkpoints.takeLost): the runner starts no further user, and lists them for the resume.
   */
  async whenDurable({ all = false }: { all?: boolean } = {}): Promise<(string | null)[] | undefined> {
    await this.commitWhenDurable(all);
    return this.checkpoints.takeLost();
  }

  /** Commits what is due (once a second), or with `all` everything staged (the jobs are done). */
  private async commitWhenDurable(all: boolean): Promise<void> {
    const { sink, formatter } = this.output;
    const wanted = () => (all ? this.checkpoints.pending : this.checkpoints.due);
    if (!sink.streams || !wanted()) return;
    await formatter.settle?.();
    // A write that failed reports it on a later tick: let it, before trusting `flushed`.
    await new Promise((resolve) => setImmediate(resolve));
    // The check and the cut in one tick: jobs write and stage during the waits above, and
    // what they stage is committed only if the check covers their records. A format that holds
    // records until the end (a table, --jq --slurp, Parquet) or in flight (--jq) has not delivered them.
    if (formatter.holdsUntilEnd || !sink.flushed || sink.failure || this.output.formatFailure) return;
    if (wanted()) await this.checkpoints.commit();
  }

  /**
   * Finishes the output, then applies the rule: the checkpoints commit only if it was
   * delivered (a file fsynced and renamed, stdout flushed without error); otherwise they are
   * dropped and left as they were. Returns the note for stderr, if any.
   */
  async finish(ok: boolean): Promise<string | undefined> {
    this.finished = true;
    const { sink } = this.output;
    const note = await sink.finish(ok && this.output.formatFailure === undefined);
    const durable = sink.delivered && !sink.failure && this.output.formatFailure === undefined;
    const pending = this.checkpoints.pending;
    if (durable) await this.checkpoints.commit();
    else if (pending) {
      await this.checkpoints.drop();
      this.reporter.error(`left as they were: ${this.checkpoints.describe().join('; ')} (the output did not take every record they cover)`);
    }
    return note;
  }

  /** Closes everything in the reverse order of opening; never throws. */
  async close(): Promise<void> {
    for (const close of this.closers.reverse()) {
      try {
        await close();
      } catch {
        // Closing is best effort: what it guards was committed or dropped already.
      }
    }
    this.closers.length = 0;
  }
}

/**
 * A run that keeps snapshots or a dataset holds more: V8 let its heap grow to up to four times
 * what it held after a full collection, most of the peak RSS of a nightly --snapshot --changes
 * --dataset run in sgq 5.3.0 (270-280 MiB over 200 accounts at --concurrency 8, the plain
 * export 166 MiB). Twice: 190-200 MiB then, for some 5% more CPU time. Since 5.3.4 holds lines
 * as bytes, V8's default measured 0.9-1.0x the CPU time for 167-183 MiB against 142-152 (400
 * accounts): kept at twice. V8's flags are the process's: only the CLI's process sets them
 * (io.setV8Flags).
 */
const KEEPING_HEAP = '--heap-growing-percent=100';

/**
 * Once a user's sort spills to disk (accounts of many thousands of followers, whose exports
 * the run's memory budget cannot hold), V8 lets the heap grow by half what it held after a
 * full collection, not by as much again: 8 accounts × 50,000 followers peaked at 168-176 MiB
 * instead of 196-201, for the same CPU time. Not before: on nights of 1,000-follower accounts
 * (none spills) it cost 5-10% more CPU time for 10-15 MiB less.
 */
const SPILLING_HEAP = '--heap-growing-percent=50';

/** The folder of a run's dataset: --dataset, else the dataset setting, where the command has one. */
const datasetDir = (plan: Plan, config: ResolvedConfig): string | undefined => plan.dataset && (plan.dataset.dir ?? config.dataset);

/**
 * The --dataset of a run (the flag, else the dataset setting), its writer started (ready() says
 * if it can write); loaded only by such runs. A run that keeps snapshots writes it in this
 * thread, from the records as parsed: the nightly job of 2,000 accounts ran as fast there on
 * the bench's two busy cores (npm run bench: nightly), for some 6% less CPU time and 35-40 MiB
 * less peak RSS than with the writer's thread (its heap, and each page's text sent and parsed
 * again), which kept it over 200 MiB.
 */
async function openDataset(plan: Plan, flags: OutputFlags, config: ResolvedConfig, options: Pick<DatasetOptions, 'owner' | 'reporter' | 'stop' | 'lockOptions'>) {
  const dir = datasetDir(plan, config);
  if (!plan.dataset || dir === undefined) return undefined;
  if (flags.raw) throw usageError('--raw cannot be used with a dataset', 'the dataset keeps records, --raw prints bodies as received: drop --raw, or the dataset setting');
  const { DatasetCheckpoint } = await import('../dataset/dataset-checkpoint.js');
  return DatasetCheckpoint.start({ dir, route: plan.dataset.route, startedAt: plan.startedAt, ...options, workerFile: plan.snapshots === undefined ? undefined : null });
}

/** The snapshot store of a --snapshot run, checked writable, with its --notify, --confirm-lost and --full-every (loaded only by such runs). */
async function openSnapshots(churn: ChurnSetup, ctx: CommandContext, { config, owner }: Connection, lockOptions: Omit<LockOptions, 'what'> & { warn: (line: string) => void }, reporter: Reporter) {
  const [{ SnapshotCheckpoint, openSnapshotStore }, { openNotifier }, { fullEveryOptions }] = await Promise.all([import('../snapshots/snapshot-jobs.js'), import('../snapshots/open-notifier.js'), import('../snapshots/nights.js')]);
  const store = openSnapshotStore(churn.dir, config, ctx.io.env, owner, lockOptions);
  const notifier = churn.notify === undefined ? undefined : openNotifier({ ...churn, notify: churn.notify }, store, owner.profile, ctx, reporter);
  const onSpill = () => void ctx.io.setV8Flags?.(SPILLING_HEAP);
  const checkpoint = SnapshotCheckpoint.open(store, { confirmLost: churn.confirmLost ?? Number(config.confirmLost ?? 1), notifier, fullEvery: fullEveryOptions(churn, config, churn.startedAt), onSpill });
  return checkpoint;
}
