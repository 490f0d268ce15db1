import { configPath, profileFlag } from '../../../core/config.js';
import { ExitCode, SgqError, configError, usageError } from '../../../core/errors.js';
import { serviceName, type StateOwner } from '../../../core/service.js';
import type { Reporter } from '../../stderr/reporter.js';
import { forgetPrices, readBalance, readObservedPrices, type SeenBalance } from '../../run/credits-store.js';
import type { CommandContext } from '../../program/context.js';
import { proxyFor } from '../../../core/proxy.js';
import { connect, recordSeenBalance } from '../../run/execute.js';
import { stateOwner } from '../../run/connection.js';
import { BALANCE_ROUTE, readBalanceWith } from '../../run/balance-probe.js';
import { count } from '../../../core/words.js';

export interface CreditsFlags {
  refresh?: boolean;
  json?: boolean;
  forgetPrices?: boolean;
}

/**
 * `sgq credits`: the last balance seen on the service the profile points at (--sandbox: the
 * sandbox's), without a call; `--refresh` asks the service (free); `--forget-prices` forgets
 * the prices learned there.
 */
export async function runCreditsCommand(ctx: CommandContext, flags: CreditsFlags): Promise<number> {
  const reporter = await ctx.reporter();
  if (flags.forgetPrices) return forget(ctx, flags, reporter);
  const { owner, seen } = flags.refresh ? await refresh(ctx, reporter) : await lastSeen(ctx, reporter);
  if (!seen) {
    throw configError(`no balance seen yet for profile ${owner.profile} at ${serviceName(owner.service)}`, `any run of a paid route records it, or ask with \`sgq credits --refresh${profileFlag(owner.profile)}\` (free)`);
  }
  const file = configPath(ctx.io.env);
  const prices = file === undefined ? new Map<string, number>() : readObservedPrices(file, owner, warned(reporter));
  const { io } = ctx;
  io.stdout.write(flags.json ? `${JSON.stringify({ profile: owner.profile, service: owner.service, ...seen, ...(prices.size ? { prices: Object.fromEntries(prices) } : {}) })}\n` : `${seen.credits}\n`);
  if (!flags.json) {
    reporter.info(`profile ${owner.profile}: ${count(seen.credits, 'credit')}, seen ${seen.seen_at} on ${seen.route} at ${seen.base_url}`);
    for (const [route, credits] of prices) reporter.info(`observed price: ${route} ${count(credits, 'credit')} a call`);
  }
  return ExitCode.ok;
}

/** The note of the service the profile points at, read without a call. */
async function lastSeen(ctx: CommandContext, reporter: Reporter): Promise<{ owner: StateOwner; seen?: SeenBalance }> {
  const owner = await stateOwner(ctx);
  const file = configPath(ctx.io.env);
  return { owner, seen: file === undefined ? undefined : readBalance(file, owner, warned(reporter)) };
}

/** A damaged note is said once, however often the command reads it. */
const warned = (reporter: Reporter) => (line: string) => reporter.warnOnce(line);

/** --forget-prices: the prices learned on the profile's service go; the next runs learn them again. */
async function forget(ctx: CommandContext, flags: CreditsFlags, reporter: Reporter): Promise<number> {
  if (flags.refresh || flags.json) throw usageError('--forget-prices cannot be used with --refresh or --json', 'forget the prices first, then run `sgq credits` again to see the balance');
  const owner = await stateOwner(ctx);
  const file = configPath(ctx.io.env);
  const where = `on profile ${owner.profile} at ${serviceName(owner.service)}`;
  const forgotten = file === undefined ? new Map<string, number>() : forgetPrices(file, owner, warned(reporter));
  if (forgotten.size === 0) {
    reporter.info(`sgq: no learned prices to forget ${where}`);
    return ExitCode.ok;
  }
  const which = [...forgotten].map(([route, credits]) => `${route} (${count(credits, 'credit')} a call)`).join(', ');
  reporter.info(`sgq: forgot the price${forgotten.size === 1 ? '' : 's'} learned for ${which} ${where}; the next runs use the public table or the prices setting until they learn ${forgotten.size === 1 ? 'it' : 'them'} again`);
  return ExitCode.ok;
}

async function refresh(ctx: CommandContext, reporter: Reporter): Promise<{ owner: StateOwner; seen: SeenBalance }> {
  const { io } = ctx;
  const connection = await connect(ctx, true, { identify: true });
  const client = await ctx.client(connection, { proxy: proxyFor(io.env, new URL(connection.baseUrl)), connections: 1, signal: io.signal });
  const { owner } = connection;
  try {
    // A free call: it spends nothing, so it needs no place in the calls ledger.
    const credits = await readBalanceWith(client);
    if (credits === undefined) {
      throw new SgqError(ExitCode.service, `the service's answer to ${BALANCE_ROUTE} carried no balance`, 'the balance is recorded by every run of a paid route; `sgq credits` then shows it');
    }
    const seen = { credits, seen_at: new Date().toISOString(), route: BALANCE_ROUTE, base_url: connection.baseUrl };
    recordSeenBalance(io.env, owner, { balance: seen }, reporter);
    return { owner, seen };
  } finally {
    await client.close();
    await connection.close();
  }
}
