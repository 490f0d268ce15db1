import { setMaxListeners } from 'node:events';
import { ApiClient } from '../../core/client.js';
import { proxyFor, type ProxyChoice } from '../../core/proxy.js';
import { DEFAULT_RETRY } from '../../core/retry.js';
import { positiveSeconds } from '../../core/values.js';
import { configPath, profileFlag, resolveConfig, type KeySource, type ResolvedConfig } from '../../core/config.js';
import { ExitCode, SgqError, configError, usageError } from '../../core/errors.js';
import { createFormatter, terminalWidth, type Format, type Formatter } from '../output/formats.js';
import { jqOptions, loadJqFilter, type JqFlags } from '../output/jq.js';
import { Reporter } from '../output/reporter.js';
import { pagerSink } from '../output/pager.js';
import { FileSink, StreamSink, checkOutFile, lockOut, type Sink } from '../output/sink.js';
import type { Lock } from '../run/file-lock.js';
import { SinceMarks } from '../run/since-marks.js';
import { dryRun } from '../run/dry-run.js';
import { TraceFile } from '../run/trace-file.js';
import { cacheDir } from '../cache-dir.js';
import type { FileCache } from '../run/response-cache.js';
import { durationMs } from '../../core/since.js';
import { creditsFile, recordBalance, type SeenBalance } from '../run/credits-store.js';
import type { CommandContext } from '../program.js';
import { defaultRemainingFile } from '../run/remaining.js';
import { runJobs, type Job, type RunOptions } from '../run/runner.js';
import { formatSummary, type RunSummary } from '../run/summary.js';


/** The output and limit flags shared by every command that fetches records. */
export interface OutputFlags extends JqFlags {
  output?: Format;
  fields?: string[];
  header?: boolean;
  pager?: boolean;
  raw?: boolean;
  out?: string;
  summary?: 'text' | 'json';
  limit?: number;
  maxCredits?: number;
  /** --wait-lock, in ms, and as given. */
  waitLock?: { ms: number; text: string };
  /** Print the requests and the worst-case credits instead of sending anything. */
  dryRun?: boolean;
  /** Every exchange as an NDJSON line in this file. */
  trace?: string;
  /** `sgq api -i`: status line and headers before each answer's records. */
  include?: boolean;
  /** --cache: reuse answers kept less than this long ago. */
  cache?: { ms: number; text: string };
  /** --max-wait: the longest Retry-After of a 429 waited out past sgq's cap. */
  maxWait?: { ms: number; text: string };
}

export interface Plan {
  label: string;
  /** The route below /api/, named where the balance it reports is recorded. */
  path: string;
  needsKey: boolean;
  knownCost: number | null;
  /** Jobs in flight at once: the caller keeps it to the jobs there are. */
  concurrency: number;
  /** `--parallel`, where the command has it; else the `parallel` setting, else 1. */
  parallel?: number;
  /** The run may make a great many calls (a list read from stdin): see ClientOptions. */
  manyCalls?: boolean;
  tagUser: boolean;
  /** The --since-last state file this run reads and advances, if any. */
  marksFile?: (resolved: ResolvedConfig) => string;
  /** Built as the run takes them, so a long list never sits in memory as jobs. */
  jobs: (resolved: ResolvedConfig, marks?: SinceMarks) => AsyncIterable<Job> | Iterable<Job>;
  resume?: RunOptions['resume'];
}

/** Where requests go for this run: the configured service, or an in-process sandbox. */
export interface Connection {
  config: ResolvedConfig;
  baseUrl: string;
  apiKey?: string;
  /** Where the key came from, named when the service rejects it. */
  apiKeySource?: KeySource;
  close: () => Promise<void>;
}

/**
 * The client of a run: the connection's address and key, --timeout and --retries over the settings.
 *
 * Behind a proxy, or for a list of users on stdin, requests go through undici, which parses
 * HTTP with a WebAssembly module. Keeping that on V8's baseline tier lowers an export's peak
 * memory on Node 20 from ~99 to ~68 MiB at no measurable cost in time (npm run bench), and
 * spares a run the ~150 ms that Node 20 otherwise waits at exit for V8 to finish optimising
 * the module in the background (Node 22 and 24 do not wait). It must be set before undici's
 * first connection, and only by the CLI: a library must not change the V8 flags of the program
 * that loads it. Node 24's V8 ignores the flag when set at run time.
 */
export function newClient(ctx: CommandContext, connection: Connection, run: { proxy?: ProxyChoice; connections: number; manyCalls?: boolean; signal?: AbortSignal; reporter: Reporter; trace?: TraceFile; maxWait?: { ms: number; text: string }; cache?: FileCache }): ApiClient {
  const { globals, io } = ctx;
  const { config } = connection;
  return new ApiClient({
    baseUrl: connection.baseUrl,
    apiKey: connection.apiKey,
    apiKeySource: connection.apiKeySource,
    timeoutMs: (globals.timeout ?? optionalNumber(config.timeout) ?? 30) * 1000,
    retry: { ...DEFAULT_RETRY, retries: globals.retries ?? optionalNumber(config.retries) ?? DEFAULT_RETRY.retries, maxRetryAfterMs: retryAfterCap(io.env), maxWaitMs: run.maxWait?.ms },
    onLongWait: (ms, why) => run.reporter.waiting(ms, `${why}; waiting ${Math.ceil(ms / 1000)}s for it, as --max-wait ${run.maxWait?.text} allows`),
    env: io.env,
    proxy: run.proxy,
    connections: run.connections,
    manyCalls: run.manyCalls,
    beforeUndici: io.setV8Flags && (() => io.setV8Flags!('--liftoff-only')),
    signal: run.signal,
    trace: run.reporter.tracing ? (line) => run.reporter.trace(line) : undefined,
    exchange: run.trace && ((exchange) => run.trace!.write(exchange)),
    cache: run.cache,
  });
}

export async function connect(ctx: CommandContext, needsKey: boolean): Promise<Connection> {
  const { globals, io } = ctx;
  const config = resolveConfig(globals, io.env);
  if (globals.sandbox) {
    const { startSandbox, DEMO_KEY } = await import('../../sandbox/server.js');
    const sandbox = await startSandbox({ port: 0 });
    return { config, baseUrl: sandbox.url, apiKey: DEMO_KEY, close: sandbox.close };
  }
  if (!config.baseUrl) {
    throw configError('no service address configured', `set one with \`sgq config set base-url URL${profileFlag(config.profile)}\` or SGQ_BASE_URL, or try \`sgq --sandbox …\``);
  }
  if (needsKey && !config.apiKey) {
    throw configError(
      `no API key configured (profile ${config.profile})`,
      `set one with \`sgq config set api-key${profileFlag(config.profile)}\` (reads stdin) or SGQ_API_KEY; \`sgq metadata userid\` and \`sgq info\` need none`,
    );
  }
  return { config, baseUrl: config.baseUrl, apiKey: config.apiKey, apiKeySource: config.apiKeySource, close: async () => undefined };
}

/** Chooses the format: flag, then config, then table on a terminal and NDJSON in a pipe or file; checks --no-header against it. */
export function chooseFormat(flags: Pick<OutputFlags, 'output' | 'out' | 'header'>, config: ResolvedConfig, stdoutIsTTY: boolean): Format {
  const format = flags.output ?? (config.output as Format | undefined) ?? (stdoutIsTTY && !flags.out ? 'table' : 'ndjson');
  if (flags.header === false && format !== 'csv' && format !== 'tsv') throw usageError(`--no-header is for -o csv or tsv, not ${format}`);
  return format;
}

/** Sets up the client, output and signals for one run, runs its jobs and cleans up. */
export async function execute(ctx: CommandContext, plan: Plan, flags: OutputFlags): Promise<number> {
  const { io, globals } = ctx;
  const reporter = await Reporter.open(io, { quiet: globals.quiet, verbose: globals.verbose });
  const out = flags.out === undefined ? undefined : checkOutFile(flags.out);
  // A --jq filter that does not compile is a usage error before any request.
  const jq = jqOptions(flags, (text) => reporter.raw(text));
  if (jq) await loadJqFilter(jq);
  const lockOptions = {
    waitMs: flags.waitLock?.ms ?? 0,
    waitFlag: flags.waitLock && `--wait-lock ${flags.waitLock.text}`,
    signal: io.signal,
    onWait: (line: string) => reporter.info(line),
  };
  if (flags.dryRun) {
    const config = resolveConfig(globals, io.env);
    chooseFormat(flags, config, io.stdoutIsTTY);
    const marks = plan.marksFile && SinceMarks.peek(plan.marksFile(config));
    const jobs = plan.jobs(config, marks);
    return dryRun({ config, sandbox: globals.sandbox === true, jobs, knownCost: plan.knownCost, maxCredits: flags.maxCredits, limit: flags.limit }, reporter);
  }
  // One run at a time per file replaced: a second would lose the first one's data.
  let outLock: Lock | undefined;
  let marks: SinceMarks | undefined;
  let connection: Connection | undefined;
  let trace: TraceFile | undefined;
  try {
    if (flags.trace !== undefined) trace = TraceFile.open(flags.trace);
    outLock = await lockOut(out, lockOptions);
    connection = await connect(ctx, plan.needsKey);
    reporter.maskSecrets([connection.apiKey]);
    const { config } = connection;
    if (plan.marksFile) marks = await SinceMarks.open(plan.marksFile(config), lockOptions);
    const jobs = plan.jobs(config, marks);
    // Users in flight at once, and so the sockets the pool may need.
    const concurrency = Math.max(1, plan.concurrency);
    const parallel = plan.parallel ?? optionalNumber(config.parallel) ?? 1;
    const format = chooseFormat(flags, config, io.stdoutIsTTY);

    const controller = new AbortController();
    // Every user in flight may wait on it (a retry's backoff, the budget): many listeners, no leak.
    setMaxListeners(0, controller.signal);
    const onSignal = () => controller.abort(io.signal?.reason);
    io.signal?.addEventListener('abort', onSignal, { once: true });
    if (io.signal?.aborted) onSignal();

    // Chosen before --out is touched: a proxy variable sgq cannot use ends the run here.
    const proxy = proxyFor(io.env, new URL(connection.baseUrl));
    const stopFetching = () => controller.abort('output closed');
    const sink: Sink = out
      ? FileSink.open(out, stopFetching)
      : (pagerSink(io, flags.pager !== false, stopFetching, () => reporter.stopProgress()) ?? new StreamSink(io.stdout, stopFetching));
    // Marks follow the data: as records leave sgq for output that streams, after the rename for a file.
    if (sink.streams) marks?.commitWhileStreaming(() => sink.flushed);
    const formatter = await createFormatter(format, sink, { fields: flags.fields, header: flags.header, warn: (line) => reporter.warn(line), jq, toFile: out !== undefined, width: terminalWidth(io) });
    // A formatter that refuses a record (a --jq runtime error) stops the whole run, as a full disk does.
    let formatFailure: SgqError | undefined;
    const guarded: Formatter = {
      write(records, lossless) {
        try {
          formatter.write(records, lossless);
        } catch (error) {
          if (!(error instanceof SgqError)) throw error;
          formatFailure ??= error;
          stopFetching();
          throw error;
        }
      },
      end() {
        if (formatFailure === undefined) formatter.end();
      },
      get columns() {
        return formatter.columns;
      },
      get headerWritten() {
        return formatter.headerWritten;
      },
    };
    const cache = await openCache(io.env, config, connection, flags.cache);
    const client = newClient(ctx, connection, { proxy, connections: concurrency * parallel, manyCalls: plan.manyCalls, signal: controller.signal, reporter, trace, maxWait: flags.maxWait, cache });

    let summary: RunSummary;
    try {
      summary = await runJobs(
        jobs,
        {
          concurrency,
          parallel,
          limit: flags.limit,
          maxCredits: flags.maxCredits,
          knownCost: plan.knownCost,
          raw: flags.raw === true,
          include: flags.include === true,
          tagUser: plan.tagUser || (flags.fields?.includes('query_user') ?? false),
          label: plan.label,
          format,
          resume: plan.resume,
          // Users left over go beside the output, or beside the config.
          remainingFile: flags.out ? `${flags.out}.remaining` : defaultRemainingFile(plan.label, io.env),
        },
        { client, sink, formatter: guarded, reporter, controller },
      );
    } catch (error) {
      // Even a bug must not lose what was fetched: keep it as FILE.partial.
      await sink.finish(false).catch(() => undefined);
      throw error;
    } finally {
      io.signal?.removeEventListener('abort', onSignal);
      await client.close();
    }
    const left = summary.totals.credits_left;
    if (left !== null && !globals.sandbox) recordSeenBalance(io.env, config.profile, { credits: left, seen_at: new Date().toISOString(), route: plan.path, base_url: connection.baseUrl }, reporter);
    const exitCode = summary.exit_code;
    const note = await sink.finish(exitCode === ExitCode.ok && formatFailure === undefined);
    if (sink.failure) throw sink.failure;
    if (formatFailure !== undefined) {
      if (note) reporter.error(note);
      throw formatFailure;
    }
    if (sink.delivered) marks?.commit();
    if (marks?.failure) throw marks.failure;
    if (note) reporter.error(note);
    if (trace?.failure) reporter.warn(trace.failure);
    if (cache?.failure) reporter.warn(cache.failure);
    const warnAt = optionalNumber(config.warnCredits);
    if (left !== null && warnAt !== undefined && left < warnAt) {
      reporter.warn(`only ${left.toLocaleString('en-US')} credits left, fewer than warn-credits ${warnAt.toLocaleString('en-US')}; buy credits before the next run fails`);
    }
    // Last, so that scripts find the JSON summary on the final line of stderr.
    if (flags.summary === 'json') reporter.raw(JSON.stringify(summary));
    else if (reporter.showsSummary) reporter.info(formatSummary(summary, reporter));
    // A reader that went away (`| head`) is a normal end, not a failure.
    return sink.closed ? ExitCode.ok : exitCode;
  } finally {
    trace?.close();
    marks?.close();
    outLock?.release();
    await connection?.close();
  }
}

/** Every run that saw a balance records it for `sgq credits`; a folder it cannot write only loses that note. */
export function recordSeenBalance(env: Record<string, string | undefined>, profile: string, balance: SeenBalance, reporter: Reporter): void {
  const file = creditsFile(configPath(env));
  if (file === undefined) return;
  try {
    recordBalance(file, profile, balance);
  } catch (error) {
    reporter.trace(`cannot record the balance in ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

/** The answers cache of a run with --cache or the `cache` setting (the flag wins). */
async function openCache(env: Record<string, string | undefined>, config: ResolvedConfig, connection: Connection, flag: OutputFlags['cache']): Promise<FileCache | undefined> {
  const ttlMs = flag?.ms ?? (config.cache === undefined ? undefined : durationMs(config.cache));
  const dir = cacheDir(env);
  if (ttlMs === undefined || dir === undefined) return undefined;
  // Loaded by the runs that use it: it hashes names with node:crypto.
  const { FileCache } = await import('../run/response-cache.js');
  return new FileCache(dir, ttlMs, { profile: config.profile, apiKey: connection.apiKey });
}

/**
 * The longest Retry-After waited without --max-wait: 60 s, or SGQ_RETRY_AFTER_CAP seconds
 * (lower it to fail fast at a terminal; the tests lower it to meet --max-wait in seconds).
 */
function retryAfterCap(env: Record<string, string | undefined>): number {
  const text = env.SGQ_RETRY_AFTER_CAP;
  if (!text) return DEFAULT_RETRY.maxRetryAfterMs;
  try {
    return positiveSeconds(text) * 1000;
  } catch {
    throw configError(`invalid SGQ_RETRY_AFTER_CAP ${JSON.stringify(text)}`, 'give seconds, such as 60, or unset it');
  }
}

/** Settings arrive as checked strings (see validateSetting). */
const optionalNumber = (value: string | undefined): number | undefined => (value === undefined ? undefined : Number(value));
