// The limits a user sets on a whole run: records (--limit) and credits (--max-credits).
// One Budget is shared by every user in flight, so the limits hold for the run, not per user.

export interface BudgetLimits {
  limit?: number;
  maxCredits?: number;
  /** Credits per call where the route table knows it; otherwise learned from balances. */
  knownCost: number | null;
}

export class Budget {
  private recordsTaken = 0;
  private inFlight = 0;
  private calls = 0;
  private highest: number | null = null;
  private lowest: number | null = null;

  constructor(private readonly limits: BudgetLimits) {}

  get recordsLeft(): number {
    return this.limits.limit === undefined ? Infinity : this.limits.limit - this.recordsTaken;
  }

  /** How many of `offered` records may still be written; counts them as written. */
  takeRecords(offered: number): number {
    const granted = Math.min(offered, this.recordsLeft);
    this.recordsTaken += granted;
    return granted;
  }

  /**
   * The cost of one call: the table's price, else the mean drop in balance over the calls
   * seen so far, else 1 (the least a paid call can cost) until a second balance is seen.
   */
  estimatedCost(): number {
    if (this.limits.knownCost !== null) return this.limits.knownCost;
    if (this.highest !== null && this.lowest !== null && this.calls > 1) {
      return Math.max(1, Math.ceil((this.highest - this.lowest) / (this.calls - 1)));
    }
    return 1;
  }

  /** Credits spent by this run so far, as far as the balances tell. */
  get creditsUsed(): number {
    if (this.limits.knownCost !== null || this.highest === null || this.lowest === null) return this.calls * this.estimatedCost();
    // The drop between balances covers every call but the first, whose price is estimated.
    return this.calls === 0 ? 0 : this.highest - this.lowest + this.estimatedCost();
  }

  get creditsLeft(): number | null {
    return this.lowest;
  }

  /** Asks to make one more call; false when it could take the run past --max-credits. */
  reserveCall(): boolean {
    if (this.recordsLeft <= 0) return false;
    const max = this.limits.maxCredits;
    if (max !== undefined && this.creditsUsed + (this.inFlight + 1) * this.estimatedCost() > max) return false;
    this.inFlight++;
    return true;
  }

  /** Settles a reserved call: `charged` false for calls the service does not bill (errors, placeholders). */
  settleCall(charged: boolean, balance: number | null): void {
    this.inFlight--;
    if (balance !== null) {
      this.highest = this.highest === null ? balance : Math.max(this.highest, balance);
      this.lowest = this.lowest === null ? balance : Math.min(this.lowest, balance);
    }
    if (charged) this.calls++;
  }
}
