// What each call really cost, from the balance the service reports before and after it.
// A call is measured only when it ran alone (nothing else in flight from its start to its
// answer) right after a call whose answer carried the balance: with calls side by side
// (--parallel, several users at once) the drops cannot be told apart. A price is taken as
// observed once two calls in a row that returned data cost the same, so a single drop
// inflated by another client spending on the same key is not taken for a price. Other
// processes spending from the same account are seen through a SpendWatch (the CLI's calls
// ledger): a drop between two balances is measured only when none of them called in between.

/** What the meter tells its owner: a price observed, a balance that went up between calls, or a drop another process shared. */
export type PriceEvent =
  | { kind: 'observed'; credits: number; before: number; after: number }
  | { kind: 'rose'; before: number; after: number }
  | { kind: 'crowded' };

/**
 * The calls of the other processes spending from the same account, as far as they can be seen.
 * `started` and `ended` frame each call of this process; `started` returns where the call
 * stands among everyone's calls, for `quietSince`.
 */
export interface SpendWatch<Mark = unknown> {
  started(): Mark;
  ended(): void;
  /** Whether no other process had a call in flight at any moment since `mark` was taken. */
  quietSince(mark: Mark): boolean;
}

export class PriceMeter {
  /** The balance after the last call, while nothing has been in flight since; else null. */
  private lastBalance: number | null = null;
  /** Where the call that reported `lastBalance` started among everyone's calls (SpendWatch). */
  private lastMark: unknown;
  /** The mark of the first call of those now in flight: no later than the start of any of them. */
  private busyMark: unknown;
  private acquired = 0;
  /** `acquired` when the call now in flight started alone; -1 when none did. */
  private soloStart = -1;
  /** The last drop measured on a call that returned data, and how many calls in a row showed it. */
  private lastDrop: number | null = null;
  private streak = 0;
  /** The price observed in this run, once two calls agreed. */
  observed: number | null = null;
  /** Credits of the calls measured, and how many there were. */
  measuredCredits = 0;
  measuredCalls = 0;

  constructor(
    private readonly onEvent?: (event: PriceEvent) => void,
    private readonly watch?: Pick<SpendWatch, 'quietSince'>,
  ) {}

  /** A call starts; `inFlight` counts it; `mark` is where it starts (SpendWatch.started). */
  started(inFlight: number, mark?: unknown): void {
    this.acquired++;
    this.soloStart = inFlight === 1 ? this.acquired : -1;
    if (inFlight === 1) this.busyMark = mark;
  }

  /** Whether the call settling now ran alone from its start (`inFlight` counts it). */
  alone(inFlight: number): boolean {
    return inFlight === 1 && this.soloStart === this.acquired;
  }

  /** The last drop seen on a call with data, while it is not yet agreed on: a budget must not assume less. */
  get pending(): number | null {
    return this.lastDrop !== null && this.lastDrop !== this.observed ? this.lastDrop : null;
  }

  /**
   * A call settled. `inFlight` counts it still; `records` is null for a call that failed. An
   * answer from the cache is neither charged nor carries a balance, and changes nothing.
   * Returns what the call cost when it could be measured.
   */
  settled(inFlight: number, call: { charged: boolean; balance: number | null; records: number | null }): number | undefined {
    const alone = this.alone(inFlight);
    const before = alone ? this.lastBalance : null;
    // A balance a double does not hold exactly (past 2^53, or with a fraction) measures no price:
    // a call of 1 credit from 10^30 shows no drop at all.
    const balance = call.balance !== null && Number.isSafeInteger(call.balance) ? call.balance : null;
    // A call that failed, or was charged and reported no balance, leaves the next one unmeasurable.
    if (balance === null) {
      if (call.records === null || call.charged) this.lastBalance = null;
      return undefined;
    }
    const since = this.lastMark;
    this.lastBalance = inFlight === 1 ? balance : null;
    this.lastMark = this.busyMark;
    if (before === null || !call.charged) return undefined;
    if (this.watch && !this.watch.quietSince(since)) {
      // Another process called in between: the drop is not this call's price alone.
      this.onEvent?.({ kind: 'crowded' });
      this.lastDrop = null;
      return undefined;
    }
    if (balance > before) {
      // Credits bought during the run, or a service that refunds: no price to learn from it.
      this.onEvent?.({ kind: 'rose', before, after: balance });
      this.lastDrop = null;
      return undefined;
    }
    const drop = before - balance;
    // Only calls that returned data are priced (an empty page may be free).
    if (call.records !== null && call.records > 0) this.agree(drop, before, balance);
    this.measuredCredits += drop;
    this.measuredCalls++;
    return drop;
  }

  private agree(drop: number, before: number, after: number): void {
    this.streak = drop === this.lastDrop ? this.streak + 1 : 1;
    this.lastDrop = drop;
    if (this.streak >= 2 && this.observed !== drop) {
      this.observed = drop;
      this.onEvent?.({ kind: 'observed', credits: drop, before, after });
    }
  }
}
