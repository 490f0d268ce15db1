import { ExitCode, SgqError, usageError } from '../../../core/errors.js';
import type { CommandContext } from '../../program/context.js';
import { DEMO_KEY, EXPIRED_KEY, LOW_KEY, startSandbox, type Faults } from '../../../sandbox/server.js';
import type { Shape } from '../../../sandbox/shapes.js';
import { PUBLISHED_RATE_LIMITS, parseRateLimits, trialHourMs } from '../../../core/rate-limits.js';

export interface SandboxFlags extends Omit<Faults, 'trialLimits' | 'trialHourMs'> {
  port?: number;
  /** Act as a trial account with the published limits, or with `trialLimits` (route=requests pairs). */
  trial?: boolean;
  trialLimits?: string;
  ttl?: number;
  prefix?: string;
  clock?: string;
  /** Lists come, go and flicker with the clock, at this daily rate. */
  churn?: number;
  credits?: number;
  detach?: boolean;
  shape?: Shape;
}

/** A detached sandbox that nobody stops still ends: after an hour, unless --ttl says otherwise. */
const DETACHED_TTL_SECONDS = 3600;

/** `sgq sandbox`: serves until interrupted (or --ttl); the address and demo key go to stdout. */
export async function runSandboxCommand(ctx: CommandContext, flags: SandboxFlags): Promise<number> {
  const { io } = ctx;
  if (flags.detach) return detach(ctx, flags);
  let clock: (() => Date) | undefined;
  if (flags.clock) {
    const fixed = new Date(flags.clock);
    if (Number.isNaN(fixed.getTime())) throw usageError(`invalid --clock ${JSON.stringify(flags.clock)}`, 'use an ISO 8601 date-time such as 2026-11-01T12:00:00Z');
    clock = () => fixed;
  }
  const { port, ttl, prefix, credits, shape, churn, clock: _clock, trial, trialLimits, ...rest } = flags;
  const faults: Faults = { ...rest, ...trialFaults(trial, trialLimits, io.env) };
  // --ttl is timed below, with the other ways to stop, rather than by the server itself.
  const sandbox = await startSandbox({ port: port ?? 0, prefix, clock, credits, shape, churn, faults }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'EADDRINUSE' || error.code === 'EACCES') {
      throw usageError(`cannot listen on 127.0.0.1:${port}: ${error.code === 'EADDRINUSE' ? 'the port is in use' : 'permission denied'}`, 'choose another --port, or leave it out for a free one');
    }
    throw error;
  });
  // Lines a shell can source as they are: eval "$(sgq sandbox --detach)".
  io.stdout.write(`export SGQ_BASE_URL=${sandbox.url}\nexport SGQ_API_KEY=${DEMO_KEY}\n`);
  if (!ctx.globals.quiet) {
    io.stderr.write(
      [
        `sgq sandbox listening on ${sandbox.url} (Ctrl-C stops it)`,
        `  demo key ${DEMO_KEY}; ${EXPIRED_KEY} answers 429 (subscription expired); ${LOW_KEY} has 20 credits left`,
        churn
          ? `  users: any name; nobody* and ghost* have no data; lists churn with the clock: about ${churn} of a list leaves each day, as many come, as many more miss a day`
          : '  users: any name; nobody* and ghost* have no data; a name ending in _N has N followers (bench_200000)',
        ...(faults.trialLimits ? [`  a trial account: ${Object.entries(faults.trialLimits).map(([route, n]) => `${route} ${n}`).join(', ')} requests an hour, then 429`] : []),
        `  records in the ${shape === 'spec' ? "spec's example shape (username, last_checked)" : "service's shape (follower_username, follower_userid …); --shape spec for the spec's"}`,
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

/**
 * The trial account of --trial (the published limits) or --trial-limits (the limits given); its
 * hour is SGQ_TRIAL_HOUR_MS in the tests, as for sgq's own pace.
 */
function trialFaults(trial: boolean | undefined, pairs: string | undefined, env: Record<string, string | undefined>): Pick<Faults, 'trialLimits' | 'trialHourMs'> {
  if (!trial && pairs === undefined) return {};
  const trialLimits = pairs === undefined ? { ...PUBLISHED_RATE_LIMITS } : Object.fromEntries(parseRateLimits(pairs));
  return { trialLimits, trialHourMs: trialHourMs(env) };
}

/**
 * `--detach`: starts the same sandbox as a process of its own, prints its address, key and pid
 * as shell lines once it listens, and returns while it serves. `kill "$SGQ_SANDBOX_PID"` stops it.
 */
async function detach(ctx: CommandContext, flags: SandboxFlags): Promise<number> {
  const { detach: _detach, ttl, ...rest } = flags;
  const args = ['sandbox', '--quiet', '--ttl', String(ttl ?? DETACHED_TTL_SECONDS)];
  for (const [name, value] of Object.entries(rest)) {
    const flag = `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
    if (value === true) args.push(flag);
    else if (value !== undefined && value !== false) args.push(flag, String(value));
  }
  const { spawn } = await import('node:child_process');
  // The launcher that is running now (bin/sgq.cjs), so the child is this same sgq.
  const child = spawn(process.execPath, [process.argv[1]!, ...args], { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: ctx.io.env });
  const ready = await new Promise<{ url: string; key: string }>((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new SgqError(ExitCode.internal, 'the detached sandbox did not start within 20 s')), 20_000);
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      out += text;
      const url = /SGQ_BASE_URL=(\S+)/.exec(out);
      const key = /SGQ_API_KEY=(\S+)/.exec(out);
      if (url && key) {
        clearTimeout(timer);
        resolve({ url: url[1]!, key: key[1]! });
      }
    });
    child.stderr.setEncoding('utf8').on('data', (text: string) => (err += text));
    child.once('exit', (code) => {
      clearTimeout(timer);
      // The child said why in sgq's own words (a port in use is a usage error, exit 2).
      const line = err.trim().split('\n').at(-1)?.replace(/^sgq: /, '') || `the sandbox exited with code ${code}`;
      reject(new SgqError(code === ExitCode.usage ? ExitCode.usage : ExitCode.internal, line));
    });
  });
  child.stdout.destroy();
  child.stderr.destroy();
  child.unref();
  ctx.io.stdout.write(`export SGQ_BASE_URL=${ready.url}\nexport SGQ_API_KEY=${ready.key}\nexport SGQ_SANDBOX_PID=${child.pid}\n`);
  if (!ctx.globals.quiet) ctx.io.stderr.write(`sgq sandbox serving on ${ready.url} as process ${child.pid}; stop it with: kill ${child.pid} (it stops by itself after ${ttl ?? DETACHED_TTL_SECONDS} s)\n`);
  return ExitCode.ok;
}
