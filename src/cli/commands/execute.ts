import type { ResolvedConfig } from '../../core/config.js';
import { ExitCode } from '../../core/errors.js';
import { isoTime } from '../../core/iso-time.js';
import { jqOptions } from '../output/jq-options.js';
import { chooseFormat } from '../output/formats.js';
import type { Reporter } from '../output/reporter.js';
import { checkOutFile } from '../output/sink.js';
import { SinceMarks } from '../run/since-marks.js';
import { RunScope } from '../run/scope.js';
import type { Plan } from '../run/plan.js';
import { dryRun } from '../run/dry-run.js';
import type { CommandContext } from '../context.js';
import { defaultRemainingFile } from '../run/remaining.js';
import { recordSeenBalance, stateOwner } from '../run/connection.js';
import { RunPrice } from '../run/run-price.js';
import { runJobs, type RunOptions } from '../run/runner.js';
import { formatSummary, type RunSummary } from '../run/summary.js';
// The connection and client of a run live in run/connection.ts; commands that make one call import them from here.
export { connect, recordSeenBalance, type Connection } from '../run/connection.js';


export type { OutputFlags } from '../run/plan.js';
import type { OutputFlags } from '../run/plan.js';
import { grouped } from '../output/words.js';

export type { Plan } from '../run/plan.js';

export { chooseFormat } from '../output/formats.js';

/** Runs a plan: its scope opens what it needs, the jobs run, the output finishes, the checkpoints follow it. */
export async function execute(ctx: CommandContext, plan: Plan, flags: OutputFlags): Promise<number> {
  const { io } = ctx;
  const reporter = await ctx.reporter();
  // An --out sgq cannot write is a usage error before anything else (the scope checks it again as it locks it).
  if (flags.out !== undefined) checkOutFile(flags.out);
  // A --jq filter that does not compile is a usage error before any request.
  const jq = jqOptions(flags, (text) => reporter.raw(text));
  if (jq) await (await import('../output/jq.js')).loadJqFilter(jq);
  if (flags.dryRun) return dryRunOf(ctx, plan, flags, reporter);
  const choice = {
    fields: flags.fields,
    header: flags.header,
    wide: flags.wide,
    pager: flags.pager,
    jq,
    format: (config: ResolvedConfig) => chooseFormat(flags, config, io.stdoutIsTTY),
    bigintAsString: (config: ResolvedConfig) => flags.bigintAsString ?? config.bigintAsString === 'true',
  };
  const scope = await RunScope.open(ctx, plan, flags, choice, reporter);
  try {
    const price = RunPrice.forRun(io.env, scope.config, plan.path, ctx.globals.sandbox ? undefined : scope.connection.baseUrl);
    let summary: RunSummary;
    try {
      summary = await runJobs(plan.jobs(scope.config, scope.held), runOptions(ctx, plan, flags, scope, price, reporter), {
        client: scope.client,
        sink: scope.output.sink,
        formatter: scope.output.formatter,
        reporter,
        controller: scope.controller,
        onJobEnd: () => scope.whenDurable(),
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
    await scope.close();
  }
}

/** --dry-run: the requests and the worst-case credits, nothing sent, nothing locked. */
async function dryRunOf(ctx: CommandContext, plan: Plan, flags: OutputFlags, reporter: Reporter): Promise<number> {
  const { io, globals, config } = ctx;
  chooseFormat(flags, config, io.stdoutIsTTY);
  // Whose marks: a loopback address is asked whether it is a sandbox (its root, not the API: nothing is charged).
  const owner = await stateOwner(ctx, { probe: plan.marksFile !== undefined });
  const marks = plan.marksFile && SinceMarks.peek(plan.marksFile(config), owner);
  const jobs = plan.jobs(config, { marks, reporter });
  const { price } = RunPrice.forRun(io.env, config, plan.path, globals.sandbox ? undefined : config.baseUrl);
  return dryRun({ config, sandbox: globals.sandbox === true, jobs, price, maxCredits: flags.maxCredits, limit: flags.limit }, reporter);
}

function runOptions(ctx: CommandContext, plan: Plan, flags: OutputFlags, scope: RunScope, price: RunPrice, reporter: Reporter): RunOptions {
  return {
    concurrency: Math.max(1, plan.concurrency),
    parallel: scope.parallel,
    limit: flags.limit,
    maxCredits: flags.maxCredits,
    knownCost: price.price?.credits ?? null,
    priceTrusted: price.price?.source === 'setting' || price.price?.source === 'observed',
    onPrice: (event) => price.onPrice(event, reporter),
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
  const { io, globals } = ctx;
  const { reporter, connection, output } = scope;
  const left = summary.totals.credits_left;
  const balance = left === null ? undefined : { credits: left, seen_at: isoTime(), route: plan.path, base_url: connection.baseUrl };
  if (!globals.sandbox) recordSeenBalance(io.env, connection.config.profile, { balance, prices: price.observed }, reporter);
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
  const warnAt = scope.settings.warnCredits;
  if (left !== null && warnAt !== undefined && left < warnAt) {
    reporter.warn(`only ${grouped(left)} credits left, fewer than warn-credits ${grouped(warnAt)}; buy credits before the next run fails`);
  }
  // Last, so that scripts find the JSON summary on the final line of stderr.
  if (flags.summary === 'json') reporter.raw(JSON.stringify(summary));
  else if (reporter.showsSummary) reporter.info(formatSummary(summary, reporter));
  // A reader that went away (`| head`) is a normal end, not a failure.
  return output.sink.closed ? ExitCode.ok : summary.exit_code;
}

