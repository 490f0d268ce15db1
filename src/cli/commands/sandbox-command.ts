import { ExitCode, usageError } from '../../core/errors.js';
import type { CommandContext } from '../program.js';
import { DEMO_KEY, EXPIRED_KEY, LOW_KEY, startSandbox, type Faults } from '../../sandbox/server.js';

export interface SandboxFlags extends Faults {
  port?: number;
  ttl?: number;
  prefix?: string;
  clock?: string;
  credits?: number;
}

/** `sgq sandbox`: serves until interrupted (or --ttl); the address and demo key go to stdout. */
export async function runSandboxCommand(ctx: CommandContext, flags: SandboxFlags): Promise<number> {
  const { io } = ctx;
  let clock: (() => Date) | undefined;
  if (flags.clock) {
    const fixed = new Date(flags.clock);
    if (Number.isNaN(fixed.getTime())) throw usageError(`invalid --clock ${JSON.stringify(flags.clock)}`, 'use an ISO 8601 date-time such as 2026-11-01T12:00:00Z');
    clock = () => fixed;
  }
  const { port, ttl, prefix, credits, clock: _clock, ...faults } = flags;
  // --ttl is timed below, with the other ways to stop, rather than by the server itself.
  const sandbox = await startSandbox({ port: port ?? 0, prefix, clock, credits, faults }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'EADDRINUSE' || error.code === 'EACCES') {
      throw usageError(`cannot listen on 127.0.0.1:${port}: ${error.code === 'EADDRINUSE' ? 'the port is in use' : 'permission denied'}`, 'choose another --port, or leave it out for a free one');
    }
    throw error;
  });
  io.stdout.write(`SGQ_BASE_URL=${sandbox.url}\nSGQ_API_KEY=${DEMO_KEY}\n`);
  if (!ctx.globals.quiet) {
    io.stderr.write(
      [
        `sgq sandbox listening on ${sandbox.url} (Ctrl-C stops it)`,
        `  demo key ${DEMO_KEY}; ${EXPIRED_KEY} answers 429 (subscription expired); ${LOW_KEY} has 20 credits left`,
        '  users: any name; nobody* and ghost* have no data; a name ending in _N has N followers (bench_200000)',
        '',
      ].join('\n'),
    );
  }
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    io.signal?.addEventListener('abort', stop, { once: true });
    if (ttl) setTimeout(stop, ttl * 1000).unref();
    if (!io.signal && !ttl) process.once('SIGINT', stop);
  });
  await sandbox.close();
  return ExitCode.ok;
}
