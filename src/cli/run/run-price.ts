import { configPath, type Env, type ResolvedConfig } from '../../core/config.js';
import type { PriceEvent } from '../../core/price-meter.js';
import { isoTime } from '../../core/iso-time.js';
import { priceOf, priceOrigin, type Price } from '../../core/prices.js';
import type { Reporter } from '../stderr/reporter.js';
import type { StateOwner } from '../../core/service.js';
import { readObservedPrices, type ObservedPrice } from './credits-store.js';
import { count, grouped } from '../../core/words.js';

// The price a run uses for its route (prices.ts: setting > observed > public table), and what
// the run learns of it: a price observed from the balances is said once on stderr (a note:
// not under --quiet, as it needs no action) and kept beside the balance (credits-store.ts), as
// the prices of the run's service and profile, so the next runs, dry runs and budgets there
// use it; `sgq credits` and `--summary json` show it.

const credits = (n: number) => count(n, 'credit');

export class RunPrice {
  /** The price observed in this run, to be kept for the profile. */
  private seen?: ObservedPrice;
  /** A drop another process shared was traced once already. */
  private crowdedSaid = false;

  private constructor(
    private readonly path: string,
    readonly price: Price | null,
    /** The price observed on this service and profile by earlier runs, if any. */
    private readonly stored: number | undefined,
  ) {}

  /** The price of `path` for a run of `owner` (the service and profile whose observed prices it reads; a damaged note is said on `reporter`). */
  static forRun(env: Env, config: ResolvedConfig, path: string, owner: StateOwner, reporter: Reporter): RunPrice {
    const file = configPath(env);
    const stored = file === undefined ? undefined : readObservedPrices(file, owner, (line) => reporter.warnOnce(line)).get(path);
    return new RunPrice(path, priceOf(path, { setting: config.prices, observed: stored }), stored);
  }

  /** What the budget's meter saw: an observed price is said once (not with --quiet), a balance that rose only with --verbose. */
  onPrice(event: PriceEvent, reporter: Reporter): void {
    if (event.kind === 'rose') {
      reporter.trace(`the balance went up from ${grouped(event.before)} to ${grouped(event.after)} between two calls (credits bought during the run?): that call's price is not measured`);
      return;
    }
    if (event.kind === 'crowded') {
      if (!this.crowdedSaid) reporter.trace('another sgq process called the service on this account between two calls: no price is measured from the balances while that lasts');
      this.crowdedSaid = true;
      return;
    }
    this.seen = { credits: event.credits, seen_at: isoTime() };
    const { price } = this;
    if (event.credits === price?.credits || event.credits === this.stored) return;
    const how = `(the balance went from ${grouped(event.before)} to ${grouped(event.after)}, one call at a time)`;
    if (price === null) {
      reporter.info(`sgq: ${this.path} cost ${credits(event.credits)} a call ${how}; sgq uses that price from now on for this profile`);
    } else if (price.source === 'setting') {
      reporter.info(`sgq: ${this.path} cost ${credits(event.credits)} a call ${how}, not the ${price.credits} of the prices setting, which still wins: change or unset it to use the observed price`);
    } else {
      reporter.info(`sgq: ${this.path} cost ${credits(event.credits)} a call ${how}, not ${price.credits} (price: ${priceOrigin(price)}); sgq uses ${event.credits} from now on for this profile`);
    }
  }

  /** The prices observed in this run, route by route, for credits.json. */
  get observed(): Record<string, ObservedPrice> | undefined {
    return this.seen ? { [this.path]: this.seen } : undefined;
  }

  /** The same as credits a call, route by route, for the summary (`prices` of `--summary json`). */
  get observedCredits(): Record<string, number> | undefined {
    return this.seen ? { [this.path]: this.seen.credits } : undefined;
  }
}
