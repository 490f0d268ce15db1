import { proxyFor } from '../../core/proxy.js';
import { DEFAULT_RETRY } from '../../core/retry.js';
import { retryAfterCapMs } from '../../core/settings.js';
import type { SnapshotStore } from '../../core/snapshots/snapshots.js';
import type { SgqHooks } from '../../core/hooks.js';
import type { CommandContext } from '../program/context.js';
import type { Reporter } from '../stderr/reporter.js';
import type { TraceFile } from '../run/trace-file.js';
import { verboseHooks } from '../run/verbose-hooks.js';
import { RunNotifier } from './notifier.js';
import { NotifyOutbox } from './notify-outbox.js';

// The notifier of a --snapshot run with --notify (or the notify setting): its posts go as the
// run's calls do, with the same time limit, retries, proxy rules, --verbose lines and --trace
// file, the address masked in all of them.

/** What a --snapshot run asks of its snapshots beside storing them. */
export interface ChurnSetup {
  dir?: string;
  /** The notify URL: the flag, else the setting. */
  notify?: string;
  /** --confirm-lost (else the setting, else 1). */
  confirmLost?: number;
  /** --full-every (else the setting, else 1), --full and --key. */
  fullEvery?: number;
  full?: boolean;
  key?: string;
  /** The command, for the summary line (`graph followers`). */
  label: string;
  startedAt: Date;
  /** The time limit of an attempt, and the retries (--timeout, --retries, else the settings). */
  attemptMs: number;
  retries?: number;
  trace?: TraceFile;
}

export function openNotifier(churn: ChurnSetup & { notify: string }, store: SnapshotStore, profile: string, ctx: CommandContext, reporter: Reporter): RunNotifier {
  const { env, signal } = ctx.io;
  const hooks: SgqHooks[] = [];
  if (reporter.tracing) hooks.push(verboseHooks((line) => reporter.trace(line)));
  if (churn.trace) hooks.push(churn.trace.hooks());
  const retry = { ...DEFAULT_RETRY, retries: churn.retries ?? DEFAULT_RETRY.retries, maxRetryAfterMs: retryAfterCapMs(env) };
  return new RunNotifier({
    outbox: NotifyOutbox.of(store, profile),
    url: churn.notify,
    command: `sgq ${churn.label}`,
    startedAt: churn.startedAt,
    post: { timeoutMs: churn.attemptMs, retry, env, proxy: proxyFor(env, new URL(churn.notify)), hooks, signal },
    reporter,
  });
}
