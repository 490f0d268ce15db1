// The pace of a trial account: how many calls of a route the last hour holds, and when the
// next may go. A sliding hour, which also keeps within an hour counted from the clock's full
// hours. A call counts from when its answer came back (the service counted it no later), and
// a call still in flight counts as inside the hour, so a pace kept here is never ahead of the
// service's count. Pure functions over what the pace file holds (src/cli/run/pace-file.ts);
// times are ms since the epoch.

/** One call of a route. */
export interface CallMark {
  /** Which run's call it is, so that run can mark it answered. */
  id?: string;
  /** When it was sent. */
  at: number;
  /** When its answer came (or it failed); absent while it is in flight. */
  done?: number;
  /** In flight past this instant, its process is taken to be gone: it counts as answered then. */
  lapse: number;
}

/** What is known of one route's hour. */
export interface RoutePace {
  /** The calls of the last hour. */
  calls: CallMark[];
  /** The service refused a call for the route's limit then, and no call goes before `refusedUntil`. */
  refusedAt?: number;
  refusedUntil?: number;
  /** The limit the service stated in its refusal (`Max Requests Per Hour`). */
  stated?: number;
}

/** Whether the account is taken for a trial account because the service refused a call for its limit, and since when. */
export interface Learned {
  at: number;
}

/** The pace file's content: per profile and service. */
export interface PaceState {
  learned?: Learned;
  routes: Record<string, RoutePace>;
}

/** When a call counts as made, seen at `now`: its answer; in flight, no sooner than now (or at its lapse). */
const countedAt = (call: CallMark, now: number): number => call.done ?? Math.min(now, call.lapse);

/** The times the calls of the last hour count from, oldest first. */
function hourOf(route: RoutePace | undefined, windowMs: number, now: number): number[] {
  const times = (route?.calls ?? []).map((call) => countedAt(call, now)).filter((t) => t > now - windowMs);
  return times.sort((a, b) => a - b);
}

/** The earliest time from `from` on when fewer than `limit` of `times` (sorted) are within an hour. */
const freeAfter = (times: readonly number[], limit: number, windowMs: number, from: number): number =>
  times.length < limit ? from : Math.max(from, times[times.length - limit]! + windowMs);

/**
 * The earliest time a call of the route may go, seen at `now` (`now` itself when it may go at
 * once). A waiter looks again then: a call in flight may keep the slot longer.
 */
export function slotFor(route: RoutePace | undefined, limit: number, windowMs: number, now: number): number {
  return freeAfter(hourOf(route, windowMs, now), limit, windowMs, Math.max(now, route?.refusedUntil ?? now));
}

/** How long, from `now`, until the last of `calls` more calls may go at this pace (each counted from its start). */
export function paceMs(calls: number, limit: number, windowMs: number, route: RoutePace | undefined, now: number): number {
  const times = hourOf(route, windowMs, now);
  const start = Math.max(now, route?.refusedUntil ?? now);
  let last = now;
  // Each call's slot is no earlier than the one before, so the times stay sorted as they grow.
  for (let i = 0; i < calls; i++) times.push((last = freeAfter(times, limit, windowMs, start)));
  return last - now;
}

/**
 * Whether a learned trial is proven wrong: learned over an hour ago, and the last hour held
 * more answered calls of the route than its limit with no refusal.
 */
export function forgetsTrial(learned: Learned, route: RoutePace, limit: number, windowMs: number, now: number): boolean {
  const since = now - windowMs;
  if (learned.at > since || (route.refusedAt ?? -Infinity) > since) return false;
  return route.calls.filter((call) => call.done !== undefined && call.done > since).length > limit;
}

/** The route without what no longer matters at `now`: calls and a refusal over an hour old. */
export function pruned(route: RoutePace, windowMs: number, now: number): RoutePace {
  const since = now - windowMs;
  const kept: RoutePace = { calls: route.calls.filter((call) => countedAt(call, now) > since), ...(route.stated === undefined ? {} : { stated: route.stated }) };
  if (route.refusedAt !== undefined && Math.max(route.refusedAt, route.refusedUntil ?? 0) > since) Object.assign(kept, { refusedAt: route.refusedAt, refusedUntil: route.refusedUntil });
  return kept;
}

/** What paces a client's calls (the CLI's plan of a trial account); a client without one sends at once. */
export interface Pacer {
  /**
   * Waits until a call of `route` may go (rejects with the signal's reason when stopped); the
   * function it gives, if any, is called once the call's answer came or it failed.
   */
  before(route: string, signal?: AbortSignal): Promise<(() => Promise<void>) | undefined>;
  /** The service refused a call of `route` for its hourly limit: no call of it goes for `waitMs`. */
  refused(route: string, refusal: { limit?: number; waitMs: number }): Promise<void>;
}
