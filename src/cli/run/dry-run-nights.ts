import type { Price } from '../../core/prices.js';
import { count, grouped } from '../../core/words.js';
import type { Night } from './since-night.js';

// --dry-run under `--full-every N`: which users' lists would be whole tonight and why, and what
// the night would cost, from the store: a whole list as many pages as its last whole snapshot
// took, what came since a page (more when more than a page came).

/** The line a user's night gets. */
export function nightLine(user: string | null, night: Night): string {
  const who = user === null ? '' : `${user}: `;
  if (!night.whole) return `sgq: ${who}what came since ${night.since} tonight (${night.why})`;
  const took = night.pages === undefined ? '' : `; its last whole snapshot took ${count(night.pages, 'page')}`;
  return `sgq: ${who}whole tonight (${night.why})${took}`;
}

/** What the nights of a dry run add up to. */
export class NightTally {
  private users = 0;
  private whole = 0;
  private calls = 0;
  /** Whole lists with no whole snapshot to go by (first snapshots): pages not known. */
  private unknown = 0;

  add(night: Night): void {
    this.users++;
    if (!night.whole) this.calls++;
    else {
      this.whole++;
      if (night.pages === undefined) this.unknown++;
      else this.calls += Math.max(1, night.pages);
    }
  }

  /** The summary line; undefined when no job had a night. */
  line(fullEvery: number, price: Price | null): string | undefined {
    if (this.users === 0) return undefined;
    const credits = price === null ? 'credits not known (the price of the route is not)' : count(this.calls * price.credits, 'credit');
    const unknown = this.unknown ? `, and ${count(this.unknown, 'whole list')} never fetched before, whose pages are not known` : '';
    return `sgq: --full-every ${fullEvery}: ${grouped(this.whole)} of ${count(this.users, 'user')} whole tonight; about ${count(this.calls, 'call')}, ${credits}${unknown} (a whole list as many pages as its last whole snapshot took, what came since a page)`;
  }
}
