import { configPath, profileFlag, profileName } from '../../core/config.js';
import { ExitCode, SgqError, configError } from '../../core/errors.js';
import { numberValue, type Json } from '../../core/json.js';
import type { Reporter } from '../output/reporter.js';
import { creditsFile, readBalance, readObservedPrices, type SeenBalance } from '../run/credits-store.js';
import type { CommandContext } from '../context.js';
import { proxyFor } from '../../core/proxy.js';
import { connect, recordSeenBalance } from './execute.js';
import { grouped } from '../output/words.js';

/**
 * The call `--refresh` makes: /metadata/get_userid costs 0 credits (spec §8), and with the key
 * sent its answer carries the caller's `current_credits`, whether it found the account or
 * answered with an error record ("no data for username = …"): so the account asked about
 * need not exist. A service that leaves the balance out is reported, never answered with a
 * paid call behind the user's back.
 */
export const REFRESH_ROUTE = 'metadata/get_userid';
const REFRESH_BODY = { user: 'jack', how: 'username' };

/** `sgq credits`: the last balance seen for the profile (no call); `--refresh` asks the service. */
export async function runCreditsCommand(ctx: CommandContext, flags: { refresh?: boolean; json?: boolean }): Promise<number> {
  const { io, globals } = ctx;
  const reporter = await ctx.reporter();
  const profile = profileName(globals, io.env);
  const seen = flags.refresh ? await refresh(ctx, reporter) : lastSeen(io.env, profile);
  if (!seen) {
    throw configError(`no balance seen yet for profile ${profile}`, `any run of a paid route records it, or ask with \`sgq credits --refresh${profileFlag(profile)}\` (free)`);
  }
  const prices = observedPrices(io.env, profile, seen.base_url);
  io.stdout.write(flags.json ? `${JSON.stringify({ profile, ...seen, ...(prices.size ? { prices: Object.fromEntries(prices) } : {}) })}\n` : `${seen.credits}\n`);
  if (!flags.json) {
    reporter.info(`profile ${profile}: ${grouped(seen.credits)} credits, seen ${seen.seen_at} on ${seen.route} at ${seen.base_url}`);
    for (const [route, credits] of prices) reporter.info(`observed price: ${route} ${grouped(credits)} credit${credits === 1 ? '' : 's'} a call`);
  }
  return ExitCode.ok;
}

/** The prices runs observed on the profile, for the service the balance came from. */
function observedPrices(env: Record<string, string | undefined>, profile: string, baseUrl: string): Map<string, number> {
  const file = creditsFile(configPath(env));
  return file === undefined ? new Map() : readObservedPrices(file, profile, baseUrl);
}

function lastSeen(env: Record<string, string | undefined>, profile: string): SeenBalance | undefined {
  const file = creditsFile(configPath(env));
  return file === undefined ? undefined : readBalance(file, profile);
}

async function refresh(ctx: CommandContext, reporter: Reporter): Promise<SeenBalance> {
  const { io, globals } = ctx;
  const connection = await connect(ctx, true);
  const client = await ctx.client(connection, { proxy: proxyFor(io.env, new URL(connection.baseUrl)), connections: 1, signal: io.signal });
  try {
    const credits = balanceIn(await answerOf(() => client.call(REFRESH_ROUTE, REFRESH_BODY, { sendKey: true })));
    if (credits === undefined) {
      throw new SgqError(ExitCode.service, `the service's answer to ${REFRESH_ROUTE} carried no balance`, 'the balance is recorded by every run of a paid route; `sgq credits` then shows it');
    }
    const seen = { credits, seen_at: new Date().toISOString(), route: REFRESH_ROUTE, base_url: connection.baseUrl };
    if (!globals.sandbox) recordSeenBalance(io.env, connection.config.profile, { balance: seen }, reporter);
    return seen;
  } finally {
    await client.close();
    await connection.close();
  }
}

/** The body of the answer, also when the service answered with error records or the subscription-expired 429. */
async function answerOf(call: () => Promise<{ body: unknown }>): Promise<unknown> {
  try {
    return (await call()).body;
  } catch (error) {
    const body = error instanceof SgqError && (error.exitCode === ExitCode.service || error.exitCode === ExitCode.expired) ? error.details.body : undefined;
    if (body === undefined) throw error;
    return body;
  }
}

/** The balance an answer reports: `current_credits` (spec §2.1), or `Current credits` of the subscription-expired body (§2.4). */
function balanceIn(body: unknown): number | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const record = body as Record<string, unknown>;
  // A balance written `997.0` is kept as text by parseJson; numberValue reads its value.
  const credits = numberValue((record.current_credits ?? record['Current credits']) as Json | undefined);
  return credits !== undefined && Number.isSafeInteger(credits) && credits >= 0 ? credits : undefined;
}
