import { configPath, profileFlag, type KeySource, type ResolvedConfig } from '../../core/config.js';
import { configError } from '../../core/errors.js';
import { CHURN_ENV, SHAPES, SHAPE_ENV, type Shape } from '../../sandbox/shapes.js';
import type { CommandContext } from '../program/context.js';
import type { Reporter } from '../stderr/reporter.js';
import { cacheDir } from './cache-dir.js';
import { creditsFolder, recordSeen, type SeenByRun } from './credits-store.js';
import { fileWarning } from '../../fs/file-errors.js';
import type { FileCache } from './response-cache.js';
import { SANDBOX_SERVICE, identifyService, type StateOwner } from '../../core/service.js';

// Where a run's requests go (the configured service or an in-process sandbox, with its key),
// the answers cache it may reuse, and the note of the balance it saw. The client itself is
// built by the context (ctx.client), on the core's wiring.

/** Where requests go for this run: the configured service, or an in-process sandbox. */
export interface Connection {
  config: ResolvedConfig;
  baseUrl: string;
  apiKey?: string;
  /** Where the key came from, named when the service rejects it. */
  apiKeySource?: KeySource;
  /** The service and profile whose kept state (marks, snapshots, dataset, notes, cache) this run reads and changes. */
  owner: StateOwner;
  /** The address was asked whether it is a sandbox (or is one): `owner` is settled. */
  identified: boolean;
  close: () => Promise<void>;
}

/**
 * Where requests go. `identify` asks an http address on loopback whether it is an sgq sandbox
 * (service.ts): a run that keeps state must know whose it is before it reads any.
 */
export async function connect(ctx: CommandContext, needsKey: boolean, { identify = false } = {}): Promise<Connection> {
  const { globals, config } = ctx;
  if (globals.sandbox) {
    const shape = sandboxShape(ctx.io.env);
    const churn = sandboxChurn(ctx.io.env);
    const { startSandbox, DEMO_KEY } = await import('../../sandbox/server.js');
    const sandbox = await startSandbox({ port: 0, shape, churn });
    return { config, baseUrl: sandbox.url, apiKey: DEMO_KEY, owner: { service: SANDBOX_SERVICE, profile: config.profile }, identified: true, close: sandbox.close };
  }
  const { baseUrl } = config;
  if (needsKey && !config.apiKey) {
    throw configError(
      `no API key configured (profile ${config.profile})`,
      `set one with \`sgq config set api-key${profileFlag(config.profile)}\` (reads stdin) or SGQ_API_KEY; \`sgq metadata userid\` and \`sgq info\` need none`,
    );
  }
  const owner = { service: await identifyService(baseUrl, { probe: identify }), profile: config.profile };
  return { config, baseUrl, apiKey: config.apiKey, apiKeySource: config.apiKeySource, owner, identified: identify, close: async () => undefined };
}

/**
 * Whose state a command that sends nothing reads (`sgq snapshots`, `sgq diff`, `sgq credits`,
 * `--dry-run`): the sandbox under --sandbox, else the service the profile points at (an
 * address on loopback asked as `connect` asks it, unless `probe` is false).
 */
export async function stateOwner(ctx: Pick<CommandContext, 'globals' | 'config'>, { probe = true } = {}): Promise<StateOwner> {
  const { globals, config } = ctx;
  if (globals.sandbox) return { service: SANDBOX_SERVICE, profile: config.profile };
  return { service: await identifyService(config.baseUrl, { probe }), profile: config.profile };
}

/** The record shape of `--sandbox` runs, from SGQ_SANDBOX_SHAPE (unset or empty: the service's). */
function sandboxShape(env: Record<string, string | undefined>): Shape | undefined {
  const value = env[SHAPE_ENV];
  if (!value) return undefined;
  if ((SHAPES as readonly string[]).includes(value)) return value as Shape;
  throw configError(`invalid ${SHAPE_ENV} ${JSON.stringify(value)}`, `use one of: ${SHAPES.join(', ')}, or unset it`);
}

/** The daily churn of `--sandbox` runs' lists, from SGQ_SANDBOX_CHURN (unset or empty: none). */
function sandboxChurn(env: Record<string, string | undefined>): number | undefined {
  const value = env[CHURN_ENV];
  if (!value) return undefined;
  const rate = Number(value);
  if (value.trim() !== '' && rate >= 0 && rate <= 1) return rate;
  throw configError(`invalid ${CHURN_ENV} ${JSON.stringify(value)}`, 'use a fraction from 0 to 1 (0.05: about 5% of a list leaves each day), or unset it');
}

/**
 * Every run that saw a balance records it for `sgq credits`, and the prices it observed for
 * the next runs, as `owner`'s; a folder it cannot write only loses that note, said in a line (not under --quiet).
 */
export function recordSeenBalance(env: Record<string, string | undefined>, owner: StateOwner, seen: SeenByRun, reporter: Reporter): void {
  const config = configPath(env);
  if (config === undefined || (seen.balance === undefined && seen.prices === undefined)) return;
  try {
    recordSeen(config, owner, seen, (line) => reporter.warnOnce(line));
  } catch (error) {
    // A line unless --quiet: the run's data is whole, and a read-only config folder (a container) is a choice.
    reporter.info(`sgq: ${fileWarning(error, `cannot record the balance and prices in ${creditsFolder(config, owner)}`, '`sgq credits` shows the last ones recorded')}`);
  }
}

/** The answers cache of a run with --cache or the `cache` setting (the flag wins), kept under the cache folder. */
export async function openCache(env: Record<string, string | undefined>, ttlMs: number | undefined, connection: Connection): Promise<FileCache | undefined> {
  const dir = cacheDir(env);
  if (ttlMs === undefined || dir === undefined) return undefined;
  // Loaded by the runs that use it: it hashes names with node:crypto.
  const { FileCache } = await import('./response-cache.js');
  return new FileCache(dir, ttlMs, { owner: connection.owner, apiKey: connection.apiKey, baseUrl: connection.baseUrl });
}
