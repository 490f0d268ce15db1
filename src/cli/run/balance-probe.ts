import type { ApiClient } from '../../core/client.js';
import { ExitCode, SgqError } from '../../core/errors.js';
import { numberValue, type Json } from '../../core/json.js';

/**
 * The call that reads the balance (`sgq credits --refresh`, and the balance a run under
 * --max-credits reads before its first call): /metadata/get_userid costs 0 credits (spec §8),
 * and with the key sent its answer carries the caller's `current_credits`, whether it found
 * the account or answered with an error record ("no data for username = …"): so the account
 * asked about need not exist. A service that leaves the balance out is reported, never
 * answered with a paid call behind the user's back.
 */
export const BALANCE_ROUTE = 'metadata/get_userid';
export const BALANCE_BODY = { user: 'jack', how: 'username' };

/** The balance the service reports to the free call; undefined when its answer carries none. Throws as the call does. */
export async function readBalanceWith(client: ApiClient, signal?: AbortSignal): Promise<number | undefined> {
  return balanceIn(await answerOf(() => client.call(BALANCE_ROUTE, BALANCE_BODY, { sendKey: true, signal })));
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
