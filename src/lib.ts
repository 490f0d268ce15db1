// The package's entry for Node programs (`import { createClient } from 'sgq'`): the core's
// client with the defaults a program expects, the process environment, and a sandbox on demand.
import { createClient as createCoreClient, type ClientOptions as CoreOptions, type SgqClient } from './core/index.js';

export * from './core/index.js';

export interface ClientOptions extends Omit<CoreOptions, 'endpoint' | 'hookFailed'> {
  /** Run against an in-process sandbox of the whole service (no account, no network). */
  sandbox?: boolean;
}

/** A client whose omitted options resolve as the CLI's do: environment, then profile. */
export function createClient(options: ClientOptions = {}): SgqClient {
  const { sandbox, ...rest } = options;
  return createCoreClient({
    env: process.env,
    // A hook only watches: its failure is a warning, not the call's.
    hookFailed: (message) => process.emitWarning(message, { code: 'SGQ_HOOK_FAILED' }),
    ...rest,
    ...(sandbox
      ? {
          endpoint: async () => {
            const { startSandbox } = await import('./sandbox/server.js');
            const server = await startSandbox({ port: 0, unref: true });
            return { baseUrl: server.url, apiKey: server.apiKey, close: server.close };
          },
        }
      : {}),
  });
}
