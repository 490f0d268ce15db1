import { ApiClient } from '../../core/client.js';
import { type ProxyChoice } from '../../core/proxy.js';
import { DEFAULT_RETRY } from '../../core/retry.js';
import { positiveSeconds } from '../../core/values.js';
import { configPath, profileFlag, resolveConfig, type KeySource, type ResolvedConfig } from '../../core/config.js';
import { configError } from '../../core/errors.js';
import { durationMs } from '../../core/since.js';
import type { CommandContext } from '../program.js';
import type { Reporter } from '../output/reporter.js';
import { cacheDir } from '../cache-dir.js';
import { creditsFile, recordBalance, type SeenBalance } from './credits-store.js';
import type { FileCache } from './response-cache.js';
import type { TraceFile } from './trace-file.js';

// Where a run's requests go and the client that sends them: the configured service or an
// in-process sandbox, the key, the settings, the cache and the trace.

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
export async function openCache(env: Record<string, string | undefined>, config: ResolvedConfig, connection: Connection, flag: { ms: number } | undefined): Promise<FileCache | undefined> {
  const ttlMs = flag?.ms ?? (config.cache === undefined ? undefined : durationMs(config.cache));
  const dir = cacheDir(env);
  if (ttlMs === undefined || dir === undefined) return undefined;
  // Loaded by the runs that use it: it hashes names with node:crypto.
  const { FileCache } = await import('./response-cache.js');
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
export const optionalNumber = (value: string | undefined): number | undefined => (value === undefined ? undefined : Number(value));
