import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runSgq, type RunResult } from '../helpers/run.js';
import { useStubs } from '../helpers/stub-server.js';
import { until } from '../helpers/wait.js';

// Issue 18: SIGINT and SIGTERM end every command within a second, also one waiting on an idle
// stdin (a producer gone quiet) or on a service that does not answer. The signal is the one
// the entry aborts on a real SIGTERM (its reason is the signal's name).

const stubs = useStubs();

/** Before the fix these waited for ever; 5 s is generous for "within a second" on a busy machine. */
const DEADLINE_MS = 5_000;

/** Runs sgq, waits for `ready`, aborts with `signal` and returns how it ended and how long that took. */
async function stopOnce(argv: string[], ready: (stdin: PassThrough) => boolean | Promise<boolean>, signal: 'SIGTERM' | 'SIGINT', options: { env?: Record<string, string>; input?: string } = {}) {
  const controller = new AbortController();
  const stdin = new PassThrough();
  if (options.input) stdin.write(options.input);
  const run = runSgq(argv, { stdinStream: stdin, signal: controller.signal, env: options.env });
  await until(() => ready(stdin), 'the command to be waiting');
  const sent = Date.now();
  controller.abort(signal);
  const timeout = new Promise<'timeout'>((resolve) => setTimeout(resolve, DEADLINE_MS, 'timeout').unref());
  const r: RunResult | 'timeout' = await Promise.race([run, timeout]);
  // Lets a run that missed the deadline end, so the test process does not keep it.
  stdin.end();
  return { r, ms: Date.now() - sent };
}

/** Something reads stdin: the command is waiting on it. */
const reading = (stdin: PassThrough) => stdin.listenerCount('readable') + stdin.listenerCount('data') > 0 && stdin.readableLength === 0;

describe('a stop ends a command waiting on an idle stdin', () => {
  it.each([
    ['fmt', ['fmt'], '{"username":"a"}\n', 'SIGTERM', 143],
    ['config set api-key', ['config', 'set', 'api-key'], '', 'SIGINT', 130],
    ['diff -', ['diff', '-'], 'jack\n', 'SIGTERM', 143],
  ] as const)('%s', async (_name, argv, input, signal, code) => {
    const { r, ms } = await stopOnce([...argv], reading, signal, { input });
    expect(r).not.toBe('timeout');
    expect((r as RunResult).code).toBe(code);
    expect((r as RunResult).stderr).toBe(`sgq: interrupted by ${signal}\n`);
    expect(ms).toBeLessThan(DEADLINE_MS);
  });

  it('a route reading users from stdin: exit 143, the users read named for the resume', async () => {
    const stub = await stubs(() => 'hang');
    const { r } = await stopOnce(['graph', 'followers', '-', '--concurrency', '1'], () => stub.requests.length > 0, 'SIGTERM', { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k' }, input: 'jack\njill\n' });
    expect(r).not.toBe('timeout');
    expect((r as RunResult).code).toBe(143);
    expect((r as RunResult).stderr).toContain('resume with: sgq graph followers jack jill');
    expect((r as RunResult).stderr).toContain('users after the last one read were never seen, and the resume does not list them');
  });
});

describe('a stop ends a command waiting on the service', () => {
  it('credits --refresh: exit 143, not an internal error', async () => {
    const stub = await stubs(() => 'hang');
    const { r } = await stopOnce(['credits', '--refresh'], () => stub.requests.length > 0, 'SIGTERM', { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k' } });
    expect(r).not.toBe('timeout');
    expect((r as RunResult).code).toBe(143);
    expect((r as RunResult).stderr).toBe('sgq: interrupted by SIGTERM\n');
  });
});
