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
import { RunScope, optionalNumber } from '../run/scope.js';
import type { Plan } from '../run/plan.js';
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

export type { Plan } from '../run/plan.js';

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

/** Runs a plan: its scope opens what it needs, the jobs run, the output finishes, the checkpoints follow it. */
export async function execute(ctx: CommandContext, plan: Plan, flags: OutputFlags): Promise<number> {
  const { io, globals } = ctx;
  const reporter = await Reporter.open(io, { quiet: globals.quiet, verbose: globals.verbose });
  const out = flags.out === undefined ? undefined : checkOutFile(flags.out);
  // A --jq filter that does not compile is a usage error before any request.
  const jq = jqOptions(flags, (text) => reporter.raw(text));
  if (jq) await loadJqFilter(jq);
  if (flags.dryRun) return dryRunOf(ctx, plan, flags, reporter);
  const choice = { fields: flags.fields, header: flags.header, pager: flags.pager, jq, format: (config: ResolvedConfig) => chooseFormat(flags, config, io.stdoutIsTTY) };
  const scope = await RunScope.open(ctx, plan, flags, out, choice, reporter);
  try {
    let summary: RunSummary;
    try {
      summary = await runJobs(plan.jobs(scope.config, scope.held), runOptions(ctx, plan, flags, scope), {
        client: scope.client,
        sink: scope.output.sink,
        formatter: scope.output.formatter,
        reporter,
        controller: scope.controller,
        onJobEnd: () => scope.whenDurable(),
      });
    } catch (error) {
      // Even a bug must not lose what was fetched: keep it as FILE.partial.
      await scope.finish(false).catch(() => undefined);
      throw error;
    }
    return await conclude(ctx, plan, flags, scope, summary);
  } finally {
    await scope.close();
  }
}

/** --dry-run: the requests and the worst-case credits, nothing sent, nothing locked. */
function dryRunOf(ctx: CommandContext, plan: Plan, flags: OutputFlags, reporter: Reporter): Promise<number> {
  const { io, globals } = ctx;
  const config = resolveConfig(globals, io.env);
  chooseFormat(flags, config, io.stdoutIsTTY);
  const marks = plan.marksFile && SinceMarks.peek(plan.marksFile(config));
  const jobs = plan.jobs(config, { marks, reporter });
  return dryRun({ config, sandbox: globals.sandbox === true, jobs, knownCost: plan.knownCost, maxCredits: flags.maxCredits, limit: flags.limit }, reporter);
}

function runOptions(ctx: CommandContext, plan: Plan, flags: OutputFlags, scope: RunScope): RunOptions {
  return {
    concurrency: Math.max(1, plan.concurrency),
    parallel: plan.parallel ?? optionalNumber(scope.config.parallel) ?? 1,
    limit: flags.limit,
    maxCredits: flags.maxCredits,
    knownCost: plan.knownCost,
    raw: flags.raw === true,
    include: flags.include === true,
    tagUser: plan.tagUser || (flags.fields?.includes('query_user') ?? false),
    label: plan.label,
    format: chooseFormat(flags, scope.connection.config, ctx.io.stdoutIsTTY),
    resume: plan.resume,
    // Users left over go beside the output, or beside the config.
    remainingFile: flags.out ? `${flags.out}.remaining` : defaultRemainingFile(plan.label, ctx.io.env),
    startedAt: plan.startedAt,
  };
}

/** After the jobs: the output finishes, the checkpoints follow it, and the run says how it went. */
async function conclude(ctx: CommandContext, plan: Plan, flags: OutputFlags, scope: RunScope, summary: RunSummary): Promise<number> {
  const { io, globals } = ctx;
  const { reporter, connection, output } = scope;
  const left = summary.totals.credits_left;
  if (left !== null && !globals.sandbox) recordSeenBalance(io.env, connection.config.profile, { credits: left, seen_at: new Date().toISOString(), route: plan.path, base_url: connection.baseUrl }, reporter);
  const note = await scope.finish(summary.exit_code === ExitCode.ok);
  if (output.sink.failure) throw output.sink.failure;
  if (output.formatFailure !== undefined) {
    if (note) reporter.error(note);
    throw output.formatFailure;
  }
  if (scope.checkpoints.failure) throw scope.checkpoints.failure;
  if (note) reporter.error(note);
  if (scope.trace?.failure) reporter.warn(scope.trace.failure);
  if (scope.cache?.failure) reporter.warn(scope.cache.failure);
  const warnAt = optionalNumber(connection.config.warnCredits);
  if (left !== null && warnAt !== undefined && left < warnAt) {
    reporter.warn(`only ${left.toLocaleString('en-US')} credits left, fewer than warn-credits ${warnAt.toLocaleString('en-US')}; buy credits before the next run fails`);
  }
  // Last, so that scripts find the JSON summary on the final line of stderr.
  if (flags.summary === 'json') reporter.raw(JSON.stringify(summary));
  else if (reporter.showsSummary) reporter.info(formatSummary(summary, reporter));
  // A reader that went away (`| head`) is a normal end, not a failure.
  return output.sink.closed ? ExitCode.ok : summary.exit_code;
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
export async function openCache(env: Record<string, string | undefined>, config: ResolvedConfig, connection: Connection, flag: OutputFlags['cache']): Promise<FileCache | undefined> {
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


