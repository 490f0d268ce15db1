import { configPath, type Env, type ResolvedConfig } from '../../core/config.js';
import type { PriceEvent } from '../../core/price-meter.js';
import { isoTime } from '../../core/iso-time.js';
import { priceOf, priceOrigin, type Price } from '../../core/prices.js';
import type { Reporter } from '../output/reporter.js';
import { creditsFile, readObservedPrices, type ObservedPrice } from './credits-store.js';
import { count, grouped } from '../output/words.js';

// The price a run uses for its route (prices.ts: setting > observed > public table), and what
// the run learns of it: a price observed from the balances is said once on stderr and kept
// beside the balance (credits.json), so the next runs, dry runs and budgets use it.

const credits = (n: number) => count(n, 'credit');

export class RunPrice {
  /** The price observed in this run, to be kept for the profile. */
  private seen?: ObservedPrice;

  private constructor(
    private readonly path: string,
    readonly price: Price | null,
    /** The price observed on this profile by earlier runs, if any. */
    private readonly stored: number | undefined,
    /** The service the run asks; undefined for --sandbox, whose prices are not the account's. */
    private readonly baseUrl: string | undefined,
  ) {}

  /** The price of `path` for a run on `baseUrl` (undefined for --sandbox: nothing observed is read or kept). */
  static forRun(env: Env, config: ResolvedConfig, path: string, baseUrl: string | undefined): RunPrice {
    const file = creditsFile(configPath(env));
    const stored = file === undefined || baseUrl === undefined ? undefined : readObservedPrices(file, config.profile, baseUrl).get(path);
    return new RunPrice(path, priceOf(path, { setting: config.prices, observed: stored }), stored, baseUrl);
  }

  /** What the budget's meter saw: an observed price is said once, a balance that rose only with --verbose. */
  onPrice(event: PriceEvent, reporter: Reporter): void {
    if (event.kind === 'rose') {
      reporter.trace(`the balance went up from ${grouped(event.before)} to ${grouped(event.after)} between two calls (credits bought during the run?): that call's price is not measured`);
      return;
    }
    if (this.baseUrl === undefined) return;
    this.seen = { credits: event.credits, seen_at: isoTime(), base_url: this.baseUrl };
    const { price } = this;
    if (event.credits === price?.credits || event.credits === this.stored) return;
    const how = `(the balance went from ${grouped(event.before)} to ${grouped(event.after)}, one call at a time)`;
    if (price === null) {
      reporter.warn(`${this.path} cost ${credits(event.credits)} a call ${how}; sgq uses that price from now on for this profile`);
    } else if (price.source === 'setting') {
      reporter.warn(`${this.path} cost ${credits(event.credits)} a call ${how}, not the ${price.credits} of the prices setting, which still wins: change or unset it to use the observed price`);
    } else {
      reporter.warn(`${this.path} cost ${credits(event.credits)} a call ${how}, not ${price.credits} (price: ${priceOrigin(price)}); sgq uses ${event.credits} from now on for this profile`);
    }
  }

  /** The prices observed in this run, route by route, for credits.json. */
  get observed(): Record<string, ObservedPrice> | undefined {
    return this.seen ? { [this.path]: this.seen } : undefined;
  }
}
