// The limits a user sets on a whole run: records (--limit) and credits (--max-credits).
// One Budget is shared by every user in flight, so the limits hold for the run, not per user:
// a call is sent only when what it could bring still fits after the calls already in flight.

import { PriceMeter, type PriceEvent, type SpendWatch } from './price-meter.js';

export interface BudgetLimits {
  limit?: number;
  maxCredits?: number;
  /** Credits per call where a price is known (prices.ts); otherwise learned from balances. */
  knownCost: number | null;
  /**
   * The price was stated by the user: calls may run side by side under --max-credits at once.
   * A price from the public table, or one an earlier run observed (the service may have changed
   * it since), is not trusted until this run's balances had the chance to confirm it (three
   * calls one at a time, or two measured ones that agree).
   */
  trusted?: boolean;
  /** Told of a price observed from the balances, or a balance that went up (price-meter.ts). */
  onPrice?: (event: PriceEvent) => void;
  /** The calls of other processes on the same account (price-meter.ts): every call is framed in it. */
  watch?: SpendWatch;
}

/** What `acquire` decided: send the call, or stop because a limit is met. */
export type Grant = 'go' | 'limit' | 'max-credits';

export class Budget {
  private recordsTaken = 0;
  private inFlight = 0;
  private calls = 0;
  private highest: number | null = null;
  private lowest: number | null = null;
  /** The balance the last answer reported (credits bought during a run raise it again). */
  private latest: number | null = null;
  /** Records a full page holds, learned from the first page that had a next one. */
  private pageSize: number | null = null;
  private readonly waiting = new Set<() => void>();
  private readonly meter: PriceMeter;
  /** The balance before the first call was asked for (openWith). */
  private opened = false;

  constructor(private readonly limits: BudgetLimits) {
    this.meter = new PriceMeter(limits.onPrice, limits.watch);
  }

  get recordsLeft(): number {
    return this.limits.limit === undefined ? Infinity : this.limits.limit - this.recordsTaken;
  }

  /** What is left of --max-credits, if set. */
  get maxCreditsLeft(): number | undefined {
    return this.limits.maxCredits === undefined ? undefined : Math.max(0, this.limits.maxCredits - this.creditsUsed);
  }

  /**
   * The cost of one call: the price observed in this run, else the known price (or a higher
   * drop just measured, until it is confirmed), else the mean drop in balance over the calls
   * seen so far, else 1 (the least a paid call can cost) until a second balance is seen.
   */
  estimatedCost(): number {
    const { observed, pending } = this.meter;
    if (observed !== null) return observed;
    if (this.limits.knownCost !== null) return Math.max(this.limits.knownCost, pending ?? 0);
    if (this.highest !== null && this.lowest !== null && this.calls > 1) {
      return Math.max(1, Math.ceil((this.highest - this.lowest) / (this.calls - 1)));
    }
    return 1;
  }

  /** A price is known: from the table, the setting, or observed in this run. */
  private get priceKnown(): boolean {
    return this.limits.knownCost !== null || this.meter.observed !== null;
  }

  /** The price is sure enough for calls side by side under --max-credits (see `trusted`). */
  private get priceSettled(): boolean {
    if (this.meter.observed !== null || (this.limits.trusted === true && this.limits.knownCost !== null)) return true;
    // Two balances give the mean drop of an unknown price; a table price needs two measured calls after the first.
    return this.calls >= (this.limits.knownCost === null ? 2 : 3);
  }

  /**
   * Credits spent by this run so far: what the balances measured for the calls they could
   * measure (one at a time), the price for the others.
   */
  get creditsUsed(): number {
    const { measuredCredits, measuredCalls } = this.meter;
    if (this.priceKnown || measuredCalls > 0 || this.highest === null || this.lowest === null) {
      return measuredCredits + (this.calls - measuredCalls) * this.estimatedCost();
    }
    // Calls side by side at an unknown price: the drop between balances covers every call
    // but the first, whose price is estimated.
    return this.calls === 0 ? 0 : this.highest - this.lowest + this.estimatedCost();
  }

  /** The balance the last answer reported, if any did. */
  get creditsLeft(): number | null {
    return this.latest;
  }

  /**
   * Whether one more call may be sent now. A call that cannot fit yet but might once the
   * calls in flight have settled waits; one that cannot fit even then stops the caller.
   */
  private decide(): Grant | 'wait' {
    const { limit, maxCredits } = this.limits;
    if (this.recordsLeft <= 0) return 'limit';
    if (maxCredits !== undefined) {
      const cost = this.estimatedCost();
      if (this.creditsUsed + cost > maxCredits) return this.inFlight === 0 ? 'max-credits' : 'wait';
      // An unconfirmed price may be below what the service charges: one call at a time until it is confirmed.
      if (this.inFlight > 0 && (!this.priceSettled || this.creditsUsed + (this.inFlight + 1) * cost > maxCredits)) return 'wait';
    }
    if (limit !== undefined && this.inFlight > 0) {
      // Only calls whose whole pages fit run side by side; the last, partial one runs alone,
      // so at most one call's records are ever cut by --limit.
      if (this.pageSize === null || (this.inFlight + 1) * this.pageSize > this.recordsLeft) return 'wait';
    }
    return 'go';
  }

  /** As `acquire`, without waiting: 'wait' when calls in flight must settle first. */
  tryAcquire(): Grant | 'wait' {
    const grant = this.decide();
    if (grant === 'go') this.start();
    return grant;
  }

  private start(): void {
    this.inFlight++;
    this.meter.started(this.inFlight, this.limits.watch?.started());
  }

  /**
   * Whether reading the balance before the first call is worth a free call: under
   * --max-credits, so that the first call is measured too and a price the run learns is used
   * within its budget from the second call on. Not for a free route, nor when no call fits.
   */
  get wantsOpeningBalance(): boolean {
    const { maxCredits, knownCost } = this.limits;
    return maxCredits !== undefined && knownCost !== 0 && !this.opened && this.calls === 0 && this.inFlight === 0 && this.estimatedCost() <= maxCredits;
  }

  /**
   * Takes the balance `read` reports (a free call) as the one before the first call. It counts
   * as a call in flight meanwhile, and spends nothing; a failed read only leaves it unknown.
   */
  async openWith(read: () => Promise<number | undefined>): Promise<void> {
    this.opened = true;
    this.start();
    let balance: number | undefined;
    try {
      balance = await read();
    } finally {
      this.meter.settled(this.inFlight, { charged: false, balance: balance ?? null, records: null });
      this.inFlight--;
      this.limits.watch?.ended();
      this.latest = balance ?? this.latest;
      this.wakeAll();
    }
  }

  /**
   * Asks to make one more call: 'go' reserves it (settle it with `settleCall`), otherwise the
   * limit that is met. Waits while calls in flight decide it; an abort ends the wait by
   * throwing, as an aborted request does.
   */
  async acquire(signal?: AbortSignal): Promise<Grant> {
    for (;;) {
      const grant = this.decide();
      if (grant === 'go') this.start();
      if (grant !== 'wait') return grant;
      if (signal?.aborted) throw new Error('stopped while waiting for the budget');
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.waiting.delete(wake);
          signal?.removeEventListener('abort', wake);
          resolve();
        };
        this.waiting.add(wake);
        signal?.addEventListener('abort', wake, { once: true });
      });
    }
  }

  /**
   * Settles a reserved call: `charged` false for calls the service does not bill (errors,
   * placeholders). Takes its records against --limit at once (before another call can be
   * decided) and returns how many of them may be written.
   */
  settleCall(charged: boolean, balance: number | null, page?: { records: number; full: boolean }): number {
    const alone = this.meter.alone(this.inFlight);
    this.meter.settled(this.inFlight, { charged, balance, records: page ? page.records : null });
    this.inFlight--;
    this.limits.watch?.ended();
    if (balance !== null) {
      this.highest = this.highest === null ? balance : Math.max(this.highest, balance);
      this.lowest = this.lowest === null ? balance : Math.min(this.lowest, balance);
      // Answers side by side may come out of order: the lowest of them is the latest balance.
      this.latest = alone || this.latest === null ? balance : Math.min(this.latest, balance);
    }
    if (charged) this.calls++;
    let granted = 0;
    if (page) {
      if (page.full) this.pageSize = Math.max(this.pageSize ?? 0, page.records);
      granted = Math.min(page.records, this.recordsLeft);
      this.recordsTaken += granted;
    }
    this.wakeAll();
    return granted;
  }

  /** Gives back records granted to a page that will not be written (fetched ahead, then dropped). */
  returnRecords(records: number): void {
    if (records <= 0) return;
    this.recordsTaken -= records;
    this.wakeAll();
  }

  private wakeAll(): void {
    for (const wake of [...this.waiting]) wake();
  }
}
