import { execa, type ResultPromise } from 'execa';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';
import { DEMO_KEY } from '../../src/sandbox/server.js';
import { tempDir } from './run.js';
import { CLOCK } from './sandbox.js';

export const BIN = fileURLToPath(new URL('../../bin/sgq.cjs', import.meta.url));

/**
 * No test may reach the service's public address, sgq's default base URL. A run that names no
 * service (SGQ_BASE_URL, --base-url, --sandbox) and no proxy of its own is given an https
 * proxy on loopback where nothing listens: a request it sends to the default fails at once,
 * on this machine. (In the test processes themselves, test/helpers/no-public-address.ts.)
 */
function awayFromPublicAddress(args: string[], env: Record<string, string> = {}): Record<string, string> {
  const named = Boolean(env.SGQ_BASE_URL) || args.some((a) => a === '--sandbox' || a === '--base-url' || a.startsWith('--base-url='));
  const proxied = ['https_proxy', 'HTTPS_PROXY', 'all_proxy', 'ALL_PROXY', 'no_proxy', 'NO_PROXY'].some((name) => name in env);
  return named || proxied ? {} : { https_proxy: 'http://127.0.0.1:9', no_proxy: '', NO_PROXY: '' };
}

/** Runs the built binary exactly as a shell would, with an empty config folder. */
export function sgq(args: string[], options: { env?: Record<string, string>; input?: string; timeout?: number; nodeFlags?: string[] } = {}) {
  return execa(process.execPath, [...(options.nodeFlags ?? []), BIN, ...args], {
    reject: false,
    env: { SGQ_CONFIG_DIR: tempDir(), NO_COLOR: '', FORCE_COLOR: undefined, ...awayFromPublicAddress(args, options.env), ...options.env },
    extendEnv: true,
    input: options.input,
    stdin: options.input === undefined ? 'ignore' : undefined,
    timeout: options.timeout ?? 30_000,
  });
}

/** Starts `sgq sandbox` as its own process on a free loopback port; it stops by itself (--ttl). */
export function useSandboxProcess(extra: string[] = []) {
  const state: { url?: string; child?: ResultPromise } = {};
  beforeAll(async () => {
    const child = execa(process.execPath, [BIN, 'sandbox', '--port', '0', '--ttl', '300', '--clock', CLOCK.toISOString(), '-q', ...extra], {
      env: { SGQ_CONFIG_DIR: tempDir() },
      reject: false,
    });
    state.child = child;
    state.url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (c: Buffer) => {
        out += c.toString();
        const m = /SGQ_BASE_URL=(\S+)/.exec(out);
        if (m) resolve(m[1]!);
      });
      void child.then((r) => reject(new Error(`sandbox exited early: ${r.stderr}`)));
    });
  });
  afterAll(() => {
    state.child?.kill('SIGTERM');
  });
  return {
    get url() {
      return state.url!;
    },
    env: (): Record<string, string> => ({ SGQ_BASE_URL: state.url!, SGQ_API_KEY: DEMO_KEY }),
  };
}
