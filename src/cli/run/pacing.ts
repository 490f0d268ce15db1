import { configPath, type Env, type ResolvedConfig } from '../../core/config.js';
import { forgetsTrial, paceMs, pruned, slotFor, type CallMark, type Learned, type Pacer, type PaceState, type RoutePace } from '../../core/pace.js';
import { limitOrigin, rateLimitOf, requestsAnHour, trialHourMs, type RateLimit } from '../../core/rate-limits.js';
import type { StateOwner } from '../../core/service.js';
import { sleep } from '../../core/retry.js';
import { isoSecond, waitWords } from '../../core/wait-words.js';
import type { Reporter } from '../stderr/reporter.js';
import { count } from '../../core/words.js';
import { PaceFile, paceFile } from './pace-file.js';

// The plan of a run: a trial account's calls go within each route's hourly limit, across the
// runs of the profile on this machine (the pace file), instead of meeting it. The plan is the
// `plan` setting, else `trial` once the service refused a call for its limit (learned per
// profile and service), until an hour with more calls than the limit and no refusal (counted
// while the setting says `paid`) proves the account is not a trial one any more.

export interface PacingOptions {
  file: PaceFile;
  config: Pick<ResolvedConfig, 'plan' | 'rateLimits'>;
  /** The hour of the limits (SGQ_TRIAL_HOUR_MS in the tests). */
  hourMs: number;
  /** The longest an attempt lasts: a call in flight longer than that (and a margin) belonged to a run that is gone. */
  attemptMs: number;
  now: () => number;
  reporter: Reporter;
}

/** Past an attempt's time limit, a call in flight counts as answered: its run is gone. */
const LAPSE_MARGIN_MS = 10_000;
/** A wait shorter than this is not worth a line on stderr. */
const QUIET_WAIT_MS = 1000;

/** Calls this process marked, for their ids (pid.n). */
let marked = 0;

export class RunPacer implements Pacer {
  private learned: Learned | undefined;
  private readonly stated = new Map<string, number>();
  /** A wait shows on the progress line: the others in flight wait without a word. */
  private showing = false;

  constructor(private readonly options: PacingOptions) {
    this.know(options.file.read());
  }

  /** Takes what the file says of the account: a learned trial, the limits the service stated. */
  private know(state: PaceState): void {
    this.learned = state.learned;
    for (const [route, pace] of Object.entries(state.routes)) if (pace.stated !== undefined) this.stated.set(route, pace.stated);
  }

  /** Whether calls are paced, and why, in words: `the plan setting` or when it was learned. */
  planOrigin(): string | undefined {
    const { plan } = this.options.config;
    if (plan === 'trial') return 'the plan setting';
    if (plan === undefined && this.learned) return `learned from the refusal at ${isoSecond(this.learned.at, 'down')}`;
    return undefined;
  }

  limitOf(route: string): RateLimit | null {
    return rateLimitOf(route, { setting: this.options.config.rateLimits, stated: this.stated.get(route) });
  }

  async before(route: string, signal?: AbortSignal): Promise<(() => Promise<void>) | undefined> {
    // Told the account is paid, with a trial learned: calls are counted, to prove it wrong.
    const { plan } = this.options.config;
    const counted = plan === 'paid' && this.learned !== undefined;
    if (plan === 'paid' ? !counted : plan === undefined && !this.learned) return undefined;
    const limit = this.limitOf(route);
    if (!limit) return undefined;
    const mark = await this.slot(route, counted ? Infinity : limit.perHour, signal);
    return () => this.answered(route, mark, limit.perHour);
  }

  /** Takes a slot of the route's hour, waiting for one as long as it takes (a stop ends the wait). */
  private async slot(route: string, perHour: number, signal?: AbortSignal): Promise<CallMark> {
    for (;;) {
      const taken = await this.take(route, perHour, signal);
      if (typeof taken !== 'number') return taken;
      await this.wait(route, perHour, taken - this.options.now(), signal);
    }
  }

  /** Marks a call of the route as sent if the hour has room for it (always, for `Infinity`); else says when to look again. */
  private async take(route: string, perHour: number, signal?: AbortSignal): Promise<CallMark | number> {
    const { file, hourMs, attemptMs, now } = this.options;
    return file.update((state) => {
      const t = now();
      const pace = routeOf(state, route, hourMs, t);
      const at = perHour === Infinity ? t : slotFor(pace, perHour, hourMs, t);
      if (at > t) return at;
      const mark: CallMark = { id: `${process.pid}.${++marked}`, at: t, lapse: t + attemptMs + LAPSE_MARGIN_MS };
      pace.calls.push(mark);
      return mark;
    }, signal);
  }

  /** The call's answer came (or it failed): it counts from now. A learned trial proven wrong is forgotten. */
  private async answered(route: string, mark: CallMark, perHour: number): Promise<void> {
    const { file, hourMs, now } = this.options;
    await file.update((state) => {
      const t = now();
      const pace = routeOf(state, route, hourMs, t);
      const call = pace.calls.find((c) => c.id === mark.id);
      if (call) call.done = t;
      else pace.calls.push({ ...mark, done: t });
      if (this.options.config.plan === 'paid' && state.learned && forgetsTrial(state.learned, pace, perHour, hourMs, t)) {
        delete state.learned;
        const answeredCalls = pace.calls.filter((c) => c.done !== undefined && c.done > t - hourMs).length;
        this.options.reporter.info(`sgq: ${route} took ${count(answeredCalls, 'call')} within an hour without a refusal: this profile is no longer taken for a trial account`);
      }
      this.know(state);
    });
  }

  async refused(route: string, refusal: { limit?: number; waitMs: number }): Promise<void> {
    const { file, hourMs, now } = this.options;
    await file.update((state) => {
      const t = now();
      state.learned ??= { at: t };
      const pace = routeOf(state, route, hourMs, t);
      pace.refusedAt = t;
      pace.refusedUntil = Math.max(pace.refusedUntil ?? t, t + refusal.waitMs);
      if (refusal.limit !== undefined) pace.stated = refusal.limit;
      this.know(state);
    });
  }

  /** Waits for a slot: a countdown on the progress line (a line in a pipe), shown by one waiter at a time. */
  private async wait(route: string, perHour: number, ms: number, signal?: AbortSignal): Promise<void> {
    const shows = !this.showing && ms >= QUIET_WAIT_MS;
    const text = `${route} is paced to ${requestsAnHour(perHour)} (${this.planWords()}): the next call goes at ${isoSecond(this.options.now() + ms)}`;
    const end = shows ? ((this.showing = true), this.options.reporter.waiting(ms, `${text}; waiting ${waitWords(ms)}`)) : undefined;
    try {
      await sleep(Math.max(0, ms), signal);
    } finally {
      if (end) {
        end();
        this.showing = false;
      }
    }
  }

  private planWords(): string {
    if (this.options.config.plan === 'trial') return 'plan trial';
    return `plan trial, ${this.planOrigin()}; if the account is paid now: sgq config set plan paid`;
  }

  /** The dry run's line on the pace: how long `calls` calls take (null: not known), or nothing when unpaced. */
  dryRunNote(route: string, calls: number | null): string | undefined {
    const origin = this.planOrigin();
    const limit = this.limitOf(route);
    if (!origin || !limit) return undefined;
    const { hourMs, now, file } = this.options;
    const head = `plan trial (${origin}): ${route} is paced to ${requestsAnHour(limit.perHour)} (${limitOrigin(limit)})`;
    if (calls === null) return `${head}; how long the run takes is not known, as its number of calls is not: past ${count(limit.perHour, 'call')} in an hour, each call waits for one to be an hour old`;
    const ms = paceMs(calls, limit.perHour, hourMs, file.read().routes[route], now());
    if (ms === 0) return `${head}; ${calls === 1 ? 'this call goes' : `these ${count(calls, 'call')} go`} at once`;
    return `${head}; ${calls === 1 ? `this call goes in about ${waitWords(ms)}` : `these ${count(calls, 'call')} take about ${waitWords(ms)}`}`;
  }
}

/** The route's pace in `state`, its old calls dropped (made, if it had none). */
function routeOf(state: PaceState, route: string, hourMs: number, now: number): RoutePace {
  const pace = pruned(state.routes[route] ?? { calls: [] }, hourMs, now);
  state.routes[route] = pace;
  return pace;
}

/** The pacer of a run of `owner` (profile and service), its calls shared through the pace file beside the config file. */
export function runPacer(env: Env, config: ResolvedConfig, owner: StateOwner, run: Pick<PacingOptions, 'attemptMs' | 'now' | 'reporter'>): RunPacer {
  const file = new PaceFile(paceFile(configPath(env), owner), (line) => run.reporter.warn(line));
  return new RunPacer({ ...run, file, config, hourMs: trialHourMs(env) });
}
