import type { Command } from 'commander';
import type { ApiClient } from '../../core/client.js';
import { resolveConfig, sandboxConfig, type ResolvedConfig } from '../../core/config.js';
import type { ClientHooks, ClientSettings, EndpointSettings, TypedSettings } from '../../core/settings.js';
import type { Format, Formatter } from '../formats/formats.js';
import type { Reporter } from '../stderr/reporter.js';
import type { Sink } from '../output/sink.js';
import type { Io } from '../start/io.js';

// The factory every command draws on (as gh's cmdutil.Factory): the streams, the global flags,
// and the config, reporter, client and output, each made on first use. `--help` and
// `--version` never touch any of them, so they load nothing more; a test swaps the Io.

export interface GlobalOptions {
  profile?: string;
  baseUrl?: string;
  sandbox?: boolean;
  quiet?: boolean;
  verbose?: boolean;
  /** --timeout, in seconds. */
  timeout?: number;
  retries?: number;
}

/** What a run adds to the settings of its client. */
export type RunClient = Pick<ClientSettings, 'proxy' | 'connections' | 'manyCalls' | 'maxWaitMs'> & ClientHooks;

/** Records for stdout, in the format the flags, the config and the terminal choose. */
export interface RecordOutput {
  format: Format;
  formatter: Formatter;
  sink: Sink;
}

export interface CommandContext {
  readonly io: Io;
  readonly globals: GlobalOptions;
  /** The config by precedence (flag > environment > profile > default), resolved on first use. */
  readonly config: ResolvedConfig;
  /** The config's numbers (timeout, retries, parallel, warn-credits, cache), typed once. */
  settings(): Promise<TypedSettings>;
  /** stderr's reporter, with --quiet and --verbose, opened on first use. */
  reporter(): Promise<Reporter>;
  /**
   * A client for `endpoint` through the core's wiring (resolveClientSettings, then
   * clientFromSettings): --timeout and --retries over the config over the defaults. The CLI's
   * own hooks come with it (--verbose lines to the reporter; undici's parser kept on V8's
   * baseline tier, which only the real process may ask for); `run` may override them.
   */
  client(endpoint: EndpointSettings, run: RunClient): Promise<ApiClient>;
  /** Records to stdout (no --out): the format chosen, its formatter and the sink under it. */
  output(flags: { output?: Format; fields?: string[]; header?: boolean }): Promise<RecordOutput>;
  /** The whole command tree, every deferred part built (for `describe` and `completion`). */
  tree(): Command;
}

/** The context of one command run; `tree` builds the whole program on demand. */
export function createContext(io: Io, globals: GlobalOptions, tree: () => Command): CommandContext {
  let config: ResolvedConfig | undefined;
  let reporter: Promise<Reporter> | undefined;
  const context: CommandContext = {
    io,
    globals,
    get config() {
      if (config) return config;
      config = resolveConfig(globals, io.env);
      return (config = globals.sandbox ? sandboxConfig(config, io.env) : config);
    },
    async settings() {
      const { typedSettings } = await import('../../core/settings.js');
      return typedSettings(context.config);
    },
    reporter() {
      return (reporter ??= import('../stderr/reporter.js').then(({ Reporter }) => Reporter.open(io, { quiet: globals.quiet, verbose: globals.verbose })));
    },
    async client(endpoint, run) {
      const [{ resolveClientSettings }, { clientFromSettings }, { verboseHooks }] = await Promise.all([
        import('../../core/settings.js'),
        import('../../core/client-from-settings.js'),
        import('../run/verbose-hooks.js'),
      ]);
      const { proxy, connections, manyCalls, maxWaitMs, ...hooks } = run;
      const given = { timeoutMs: globals.timeout === undefined ? undefined : globals.timeout * 1000, retries: globals.retries, maxWaitMs };
      const settings = resolveClientSettings(endpoint, given, context.config, io.env);
      const shown = await context.reporter();
      shown.maskSecrets([endpoint.apiKey]);
      const trace = shown.tracing ? (line: string) => shown.trace(line) : undefined;
      const cliHooks: ClientHooks = {
        trace,
        beforeUndici: io.setV8Flags && (() => io.setV8Flags!('--liftoff-only')),
        exitCloses: io.exitsAfterRun,
      };
      // --verbose and --trace FILE both watch the client's hooks.
      const watching = [...(trace ? [verboseHooks(trace)] : []), ...(hooks.hooks ?? [])];
      return clientFromSettings({ ...settings, proxy, connections, manyCalls }, { ...cliHooks, ...hooks, hooks: watching });
    },
    async output(flags) {
      // The one output pipeline, as a run writes its records (stdout here, without a pager).
      const [{ chooseFormat }, { openOutput }] = await Promise.all([import('../formats/formats.js'), import('../output/pipeline.js')]);
      const format = chooseFormat(flags, context.config, io.stdoutIsTTY);
      const { formatter, sink } = await openOutput(io, undefined, { format, fields: flags.fields, header: flags.header, pager: false }, await context.reporter(), () => undefined);
      return { format, formatter, sink };
    },
    tree,
  };
  return context;
}
