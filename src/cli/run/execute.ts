import { configPath, type ResolvedConfig } from '../../core/config.js';
import { ExitCode, configError } from '../../core/errors.js';
import { isoTime } from '../../core/iso-time.js';
import { findRouteByPath } from '../../core/routes.js';
import { jqOptions } from '../jq/jq-options.js';
import { chooseFormat } from '../formats/formats.js';
import type { Reporter } from '../stderr/reporter.js';
import { checkOutFile } from '../output/sink.js';
import { SinceMarks } from './since-marks.js';
import { RunScope } from './scope.js';
import type { Plan } from './plan.js';
import { dryRun } from './dry-run.js';
import type { CommandContext } from '../program/context.js';
import { failed } from '../start/failure.js';
import { defaultRemainingFile } from './remaining.js';
import { recordSeenBalance, stateOwner } from './connection.js';
import { RunPrice } from './run-price.js';
import { CallsLedger } from './calls-ledger.js';
import { readBalanceWith } from './balance-probe.js';
import { runPacer } from './pacing.js';
import { normalizeRoutePath } from '../../core/routes.js';
import { runJobs, type RunOptions } from './jobs.js';
import { formatSummary, withPrices, type RunSummary } from './summary.js';
// The connection and client of a run live in run/connection.ts; commands that make one call import them from here.
export { connect, recordSeenBalance, type Connection } from './connection.js';


export type { OutputFlags } from './plan.js';
import type { OutputFlags } from './plan.js';
import { count, grouped } from '../../core/words.js';
import { SANDBOX_SERVICE, SERVICE_HEADER, answeredBySandbox, serviceName } from '../../core/service.js';
import type { FetchedPage } from '../../core/paginate.js';
import type { Connection } from './connection.js';

export type { Plan } from './plan.js';

export { chooseFormat } from '../formats/formats.js';

/** Runs a plan: its scope opens what it needs, the jobs run, the output finishes, the checkpoints follow it. */
export async function execute(ctx: CommandContext, plan: Plan, flags: OutputFlags): Promise<number> {
  const { io } = ctx;
  const reporter = await ctx.reporter();
  // An --out sgq cannot write is a usage error before anything else (the scope checks it again as it locks it).
  if (flags.out !== undefined) checkOutFile(flags.out);
  // A --jq filter that does not compile is a usage error before any request.
  const jq = jqOptions(flags, (text) => reporter.passThrough(text));
  if (jq) await (await import('../jq/jq.js')).loadJqFilter(jq);
  if (flags.dryRun) return dryRunOf(ctx, plan, flags, reporter);
  // A known route's records are described (record-fields.ts): Parquet declares its columns from that.
  const records = findRouteByPath(plan.path)?.records;
  const routeRecords = records && { records, queryUser: plan.tagUser };
  const choice = {
    fields: flags.fields,
    header: flags.header,
    wide: flags.wide,
    pager: flags.pager,
    jq,
    raw: flags.raw,
    routeRecords,
    format: (config: ResolvedConfig) => chooseFormat(flags, config, io.stdoutIsTTY, (line) => reporter.warn(line)),
    bigintAsString: (config: ResolvedConfig) => flags.bigintAsString ?? config.bigintAsString === 'true',
  };
  const scope = await RunScope.open(ctx, plan, flags, choice, reporter);
  let ledger: CallsLedger | undefined;
  try {
    const price = RunPrice.forRun(io.env, scope.config, plan.path, scope.connection.owner, reporter);
    // The calls of other sgq processes on the same account, so that their spending is not taken
    // for a price; a free route (info, userid) spends nothing and learns nothing, and writes no file.
    if (price.price?.credits !== 0) ledger = CallsLedger.open(configPath(io.env), scope.connection.owner);
    let summary: RunSummary;
    try {
      summary = await runJobs(plan.jobs(scope.config, scope.held), { ...runOptions(ctx, plan, flags, scope, price, reporter), watch: ledger }, {
        client: scope.client,
        sink: scope.output.sink,
        formatter: scope.output.formatter,
        reporter,
        controller: scope.controller,
        onJobEnd: () => scope.whenDurable(),
        onJobsDone: () => scope.whenDurable({ all: true }),
        onAnswer: (page) => checkAnswerer(scope.connection, page.headers),
      });
    } catch (error) {
      // Even a bug must not lose what was fetched: keep it as FILE.partial.
      const note = await scope.finish(false).catch(() => undefined);
      // Where the output went is worth a line even then (FILE.partial, or FILE not created).
      if (note) reporter.error(note);
      throw error;
    }
    return await conclude(ctx, plan, flags, scope, summary, price);
  } finally {
    ledger?.close();
    await scope.close();
  }
}

/** --dry-run: the requests and the worst-case credits, nothing sent, nothing locked. */
async function dryRunOf(ctx: CommandContext, plan: Plan, flags: OutputFlags, reporter: Reporter): Promise<number> {
  const { io, globals, config } = ctx;
  chooseFormat(flags, config, io.stdoutIsTTY, (line) => reporter.warn(line));
  // Whose marks: a loopback address is asked whether it is a sandbox (its root, not the API: nothing is charged).
  const owner = await stateOwner(ctx, { probe: plan.marksFile !== undefined || plan.snapshots !== undefined });
  const marks = plan.marksFile && SinceMarks.peek(plan.marksFile(config), owner);
  const nights = plan.snapshots && (await import('../snapshots/nights.js')).dryRunNights(plan.snapshots, config, io.env, owner, plan.startedAt);
  const jobs = plan.jobs(config, { marks, nights, reporter });
  const { price } = RunPrice.forRun(io.env, config, plan.path, owner, reporter);
  const pacer = runPacer(io.env, config, owner, { attemptMs: 0, now: () => (io.now ? io.now().getTime() : Date.now()), reporter });
  const pace = (calls: number | null) => pacer.dryRunNote(normalizeRoutePath(plan.path), calls);
  return dryRun({ config, sandbox: globals.sandbox === true, jobs, price, maxCredits: flags.maxCredits, limit: flags.limit, pace, fullEvery: nights?.options.fullEvery }, reporter);
}

function runOptions(ctx: CommandContext, plan: Plan, flags: OutputFlags, scope: RunScope, price: RunPrice, reporter: Reporter): RunOptions {
  return {
    concurrency: Math.max(1, plan.concurrency),
    parallel: scope.parallel,
    limit: flags.limit,
    maxCredits: flags.maxCredits,
    knownCost: price.price?.credits ?? null,
    // A price learned by an earlier run may have changed since: only the one the user states is trusted at once.
    priceTrusted: price.price?.source === 'setting',
    onPrice: (event) => price.onPrice(event, reporter),
    // Under --max-credits the balance before the first call is read (free), so that call is measured too.
    openingBalance: flags.maxCredits === undefined ? undefined : () => readBalanceWith(scope.client, scope.controller.signal).catch(() => undefined),
    raw: flags.raw === true,
    include: flags.include === true,
    tagUser: plan.tagUser || (flags.fields?.includes('query_user') ?? false),
    label: plan.label,
    format: scope.format,
    resume: plan.resume,
    // Users left over go beside the output, or beside the config.
    remainingFile: flags.out ? `${flags.out}.remaining` : defaultRemainingFile(plan.label, ctx.io.env, scope.connection.owner),
    startedAt: plan.startedAt,
    users: plan.users,
  };
}

/** After the jobs: the output finishes, the checkpoints follow it, and the run says how it went. */
async function conclude(ctx: CommandContext, plan: Plan, flags: OutputFlags, scope: RunScope, summary: RunSummary, price: RunPrice): Promise<number> {
  const { io } = ctx;
  const { reporter, connection, output } = scope;
  const left = summary.totals.credits_left;
  const balance = left === null ? undefined : { credits: left, seen_at: isoTime(), route: plan.path, base_url: connection.baseUrl };
  recordSeenBalance(io.env, connection.owner, { balance, prices: price.observed }, reporter);
  const note = await scope.finish(summary.exit_code === ExitCode.ok);
  // Once the snapshots are committed (or left as they were): --notify's posts, which change no exit code.
  await scope.held.snapshots?.afterRun();
  const failure = output.sink.failure ?? output.formatFailure ?? scope.checkpoints.failure;
  if (failure !== undefined) {
    if (note && !output.sink.failure && output.formatFailure !== undefined) reporter.error(note);
    if (flags.summary !== 'json') throw failure;
    // A script reads the summary from stderr's last line whatever failed, its exit code the run's.
    const exitCode = failed(failure, io);
    reporter.json(withPrices({ ...summary, exit_code: exitCode }, price.observedCredits));
    return exitCode;
  }
  if (note) reporter.error(note);
  const firsts = scope.held.snapshots?.firstSnapshotsNote();
  if (firsts) reporter.info(firsts);
  if (scope.trace?.failure) reporter.warn(scope.trace.failure);
  if (scope.cache?.failure) reporter.warn(scope.cache.failure);
  const warnAt = scope.settings.warnCredits;
  if (left !== null && warnAt !== undefined && left < warnAt) {
    reporter.warn(`only ${count(left, 'credit')} left, fewer than warn-credits ${grouped(warnAt)}; buy credits before the next run fails`);
  }
  // Last, so that scripts find the JSON summary on the final line of stderr.
  if (flags.summary === 'json') reporter.json(withPrices(summary, price.observedCredits));
  else if (reporter.showsSummary) for (const line of formatSummary(summary)) reporter.info(line);
  // A reader that went away (`| head`) is a normal end, not a failure.
  return output.sink.closed ? ExitCode.ok : summary.exit_code;
}

/**
 * An answer that says it is sgq's sandbox, on a run keyed as another service. A run that keeps
 * no state was not asked whose it is: from here on it is the sandbox's (its balance note goes
 * there). One that keeps state asked, and was told otherwise (an address not on loopback, or
 * https): it stops before it writes a record or keeps anything.
 */
function checkAnswerer(connection: Connection, headers: FetchedPage['headers']): void {
  const { owner, baseUrl } = connection;
  if (owner.service === SANDBOX_SERVICE || !answeredBySandbox(headers)) return;
  if (!connection.identified) {
    connection.owner = { ...owner, service: SANDBOX_SERVICE };
    return;
  }
  throw configError(
    `${baseUrl} answered as sgq's sandbox (header ${SERVICE_HEADER}), but this run keeps the state of ${serviceName(owner.service)}: nothing was kept`,
    'point SGQ_BASE_URL or base-url at the real service, or reach the sandbox on a loopback address (127.0.0.1) or with `sgq --sandbox …`',
  );
}
