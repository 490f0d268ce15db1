// What each call really cost, from the balance the service reports before and after it.
// A call is measured only when it ran alone (nothing else in flight from its start to its
// answer) right after a call whose answer carried the balance: with calls side by side
// (--parallel, several users at once) the drops cannot be told apart. A price is taken as
// observed once two calls in a row that returned data cost the same, so a single drop
// inflated by another client spending on the same key is not taken for a price.

/** What the meter tells its owner: a price observed, or a balance that went up between calls. */
export type PriceEvent =
  | { kind: 'observed'; credits: number; before: number; after: number }
  | { kind: 'rose'; before: number; after: number };

export class PriceMeter {
  /** The balance after the last call, while nothing has been in flight since; else null. */
  private lastBalance: number | null = null;
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

  constructor(private readonly onEvent?: (event: PriceEvent) => void) {}

  /** A call starts; `inFlight` counts it. */
  started(inFlight: number): void {
    this.acquired++;
    this.soloStart = inFlight === 1 ? this.acquired : -1;
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
    const { balance } = call;
    // A call that failed, or was charged and reported no balance, leaves the next one unmeasurable.
    if (balance === null) {
      if (call.records === null || call.charged) this.lastBalance = null;
      return undefined;
    }
    this.lastBalance = inFlight === 1 ? balance : null;
    if (before === null || !call.charged) return undefined;
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
