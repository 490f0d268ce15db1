import { stringifyJson, type Json } from './json.js';
import type { Budget } from './budget.js';
import { CallError } from './classify.js';
import { StoppedError, type ApiClient } from './client.js';
import { invalid, isBilled, pageItemsNote, pagingProblem, readPage, type Page } from './page.js';
import type { JsonObject } from './classify.js';

export interface PageRequest {
  path: string;
  /** The body for a page (null on routes without pages). */
  payload: (page: number | null) => Record<string, Json>;
  sendKey: boolean;
  method?: string;
  paginated: boolean;
  startPage: number;
  /** `--all`: follow next_page until it is null. */
  follow: boolean;
  maxPages?: number;
  wholeBodyIsRecord?: boolean;
}

/** Why a run of pages ended without an error; only 'done' means everything was fetched. */
export type StopReason = 'done' | 'more' | 'max-pages' | 'limit' | 'max-credits';

/** A page that failed, so the caller can say where to resume. */
export class PageFailure extends Error {
  constructor(
    readonly page: number | null,
    readonly error: Error,
  ) {
    super(error.message);
  }
}

/** A page, and how many of its records fit what was left of --limit when it arrived. */
export interface FetchedPage extends Page {
  granted: number;
  /** The page it answered (null on routes without pages). */
  asked: number | null;
  /** Keeps the answer in the cache, once every check of the page has passed. */
  keep?: () => void;
}

/** How to fetch the pages beyond the request itself. */
export interface FetchOptions {
  /** Stops waiting for the budget (the run's signal stops the calls themselves). */
  signal?: AbortSignal;
  /** `--parallel`: pages of a `follow` request in flight at once (default 1: one after another). */
  parallel?: number;
  /** Told of each call made ahead that wrote nothing: past the end, or dropped at a stop or failure. */
  onExtraCall?: () => void;
  /** Told as each call of the list is made (sent, or answered from the cache): the list was tried. */
  onCall?: () => void;
  /** Told, one line a page, what the service got wrong that is no error (a page_items that disagrees with data). */
  onNote?: (line: string) => void;
  /**
   * True while the output is slower than the fetching (a pager, a slow pipe): `--parallel`
   * then asks no page ahead of the one the output will take next, so what is bought stays
   * within a page of what the reader has taken.
   */
  holdBack?: () => boolean;
}

/**
 * Pages are the basic unit (as in octokit's paginate): one request each, in order, asked
 * only when the consumer wants the next one, so a `break` stops further requests.
 */
export async function* fetchPages(client: ApiClient, req: PageRequest, budget: Budget, options: FetchOptions = {}): AsyncGenerator<FetchedPage, StopReason> {
  const { signal, parallel = 1 } = options;
  if (req.paginated && req.follow && parallel > 1) return yield* fetchPagesAhead(client, req, budget, parallel, options);
  let page: number | null = req.paginated ? req.startPage : null;
  const sequence = new PageSequence(budget, options.onNote);
  for (let fetched = 0; ; fetched++) {
    if (req.maxPages !== undefined && fetched >= req.maxPages) return 'max-pages';
    // Waits only when the budget makes it wait (rarely): most pages of a run need no turn for it.
    const now = budget.tryAcquire();
    const grant = now === 'wait' ? await budget.acquire(signal) : now;
    if (grant !== 'go') return grant;
    options.onCall?.();
    const result = await fetchPage(client, req, budget, page);
    sequence.accept(result);
    yield result;
    // A page cut by --limit was not fetched whole, even when it was the last one.
    if (result.granted < result.records.length) return 'limit';
    if (result.nextPage === null) return 'done';
    if (budget.recordsLeft <= 0) return 'limit';
    if (!req.follow) return 'more';
    page = result.nextPage;
  }
}

/** One call reserved in the budget, settled whatever happens to it. */
async function fetchPage(client: ApiClient, req: PageRequest, budget: Budget, page: number | null, cancel?: AbortSignal): Promise<FetchedPage> {
  let read: Page;
  let keep: (() => void) | undefined;
  try {
    const reply = await client.call(req.path, req.payload(page), { sendKey: req.sendKey, method: req.method, signal: cancel });
    read = readPage(reply, page, req.wholeBodyIsRecord);
    keep = reply.keep;
  } catch (error) {
    // A call cancelled on its way may still have been billed: counting it keeps --max-credits safe.
    budget.settleCall(cancel?.aborted === true, null);
    throw error instanceof CallError ? new PageFailure(page, error) : error;
  }
  // A page from the cache cost nothing now, and its balance is an old one.
  const granted = budget.settleCall(isBilled(read), read.cached ? null : read.credits, { records: read.records.length, full: read.nextPage !== null });
  // Billed, but not written: the paging it names cannot be followed.
  const problem = pagingProblem(read, page);
  if (problem) {
    budget.returnRecords(granted);
    throw new PageFailure(page, invalid(problem));
  }
  // Completed in place: a copy ({ ...read, granted }) cost a batch of one-page users more
  // than all the rest of their bookkeeping.
  return Object.assign(read, { granted, asked: page, keep });
}

/**
 * The pages of one list as they are yielded, in order: a page that repeats the one before
 * (a service that ignores the page asked) ends the list, since following it would never end.
 * A page is kept in the cache only once it passed here.
 */
class PageSequence {
  private last: { asked: number | null; records: JsonObject[] } | undefined;

  constructor(
    private readonly budget: Budget,
    private readonly onNote?: (line: string) => void,
  ) {}

  accept(page: FetchedPage): void {
    const note = pageItemsNote(page, page.asked);
    if (note) this.onNote?.(note);
    const { last } = this;
    if (last && repeats(last.records, page.records)) {
      this.budget.returnRecords(page.granted);
      throw new PageFailure(page.asked, invalid(`page ${page.asked} holds the same records as page ${last.asked}: the service seems to ignore the page asked`));
    }
    // Kept by reference: only a next page of the same length is ever compared with it.
    if (page.records.length > 0) this.last = { asked: page.asked, records: page.records };
    page.keep?.();
  }
}

/** Whether a page repeats the one before: the same length, and the same first and last records. */
function repeats(before: JsonObject[], page: JsonObject[]): boolean {
  if (page.length === 0 || page.length !== before.length) return false;
  return stringifyJson(page[0]!) === stringifyJson(before[0]!) && stringifyJson(page.at(-1)!) === stringifyJson(before.at(-1)!);
}

/** A page asked ahead of the one being written. */
interface Ahead {
  page: number;
  cancel: AbortController;
  settled: Promise<void>;
  outcome?: { page: FetchedPage } | { error: unknown };
}

/**
 * `--parallel n`: up to n pages asked at once, yielded in page order. The page count is not
 * known in advance and pages past the end are billed, so the first page goes alone, at most
 * n-1 calls ask for pages no answer has named yet, the calls past a page that ends the list
 * (or fails) are cancelled at once, and at most n pages are held at a time.
 */
async function* fetchPagesAhead(client: ApiClient, req: PageRequest, budget: Budget, width: number, options: FetchOptions): AsyncGenerator<FetchedPage, StopReason> {
  const { signal } = options;
  const ahead = new PagesAhead(client, req, budget, width, options);
  const sequence = new PageSequence(budget, options.onNote);
  try {
    for (;;) {
      await ahead.askWhatMayBe(signal);
      const head = ahead.window[0];
      if (!head) {
        if (ahead.stop) return ahead.stop;
        throw new StoppedError(signal?.reason);
      }
      if (!head.outcome) {
        await ahead.nextChange();
        continue;
      }
      ahead.window.shift();
      if ('error' in head.outcome) throw head.outcome.error;
      const result = head.outcome.page;
      sequence.accept(result);
      yield result;
      ahead.yielded++;
      if (result.granted < result.records.length) return 'limit';
      if (result.nextPage === null) return 'done';
      if (budget.recordsLeft <= 0) return 'limit';
      if (req.maxPages !== undefined && ahead.yielded >= req.maxPages) return 'max-pages';
      // A list that skips pages: what was asked on the guess that it does not is of no use.
      if (result.nextPage !== head.page + 1) await ahead.restartAt(result.nextPage);
    }
  } finally {
    await ahead.dropAll();
  }
}

/** The pages `fetchPagesAhead` has asked and not yet yielded, and what it may ask next. */
class PagesAhead {
  /** Pages asked and not yet yielded, in page order. */
  window: Ahead[] = [];
  yielded = 0;
  /** A limit met while asking ahead: the run ends once the pages before it are written. */
  stop: StopReason | undefined;
  private nextToAsk: number;
  private asked = 0;
  /** The highest page an answer named as next: asking up to it is not a guess. */
  private known: number;
  /** No page past this one is asked: it ended the list or failed. */
  private last = Infinity;
  private changed: () => void = () => undefined;

  constructor(
    private readonly client: ApiClient,
    private readonly req: PageRequest,
    private readonly budget: Budget,
    private readonly width: number,
    private readonly options: FetchOptions,
  ) {
    this.nextToAsk = req.startPage;
    this.known = req.startPage - 1;
  }

  /** Asks every page the width, the budget and the answers so far allow. */
  async askWhatMayBe(signal: AbortSignal | undefined): Promise<void> {
    while (this.mayAsk()) {
      const grant = this.window.length === 0 ? await this.budget.acquire(signal) : this.budget.tryAcquire();
      if (grant === 'wait') break;
      if (grant !== 'go') this.stop = grant;
      else this.ask(this.nextToAsk);
    }
  }

  /** Resolves when a page asked has settled. */
  nextChange(): Promise<void> {
    return new Promise<void>((resolve) => (this.changed = resolve));
  }

  /** Drops what was asked on a guess and goes on from `page`. */
  async restartAt(page: number): Promise<void> {
    await this.dropAll();
    this.nextToAsk = page;
    this.last = Infinity;
  }

  /** Cancels and settles every page asked and not yielded: each is a call that wrote nothing. */
  async dropAll(): Promise<void> {
    const dropped = this.window;
    this.window = [];
    for (const ahead of dropped) ahead.cancel.abort('not needed');
    for (const ahead of dropped) {
      await ahead.settled;
      if (ahead.outcome && 'page' in ahead.outcome) this.budget.returnRecords(ahead.outcome.page.granted);
      this.options.onExtraCall?.();
    }
  }

  private cancelAfter(page: number): void {
    this.last = Math.min(this.last, page);
    for (const ahead of this.window) if (ahead.page > page) ahead.cancel.abort('not needed');
  }

  private ask(page: number): void {
    const ahead: Ahead = { page, cancel: new AbortController(), settled: Promise.resolve() };
    this.options.onCall?.();
    ahead.settled = fetchPage(this.client, this.req, this.budget, page, ahead.cancel.signal).then(
      (fetched) => {
        ahead.outcome = { page: fetched };
        if (fetched.nextPage === null) this.cancelAfter(page);
        else this.known = Math.max(this.known, fetched.nextPage);
      },
      (error: unknown) => {
        ahead.outcome = { error };
        this.cancelAfter(page);
      },
    );
    void ahead.settled.finally(() => this.changed());
    this.window.push(ahead);
    this.asked++;
    this.nextToAsk = page + 1;
  }

  private guesses(): number {
    return this.window.filter((a) => a.outcome === undefined && a.page > this.known).length;
  }

  private mayAsk(): boolean {
    const { req, window, width } = this;
    return (
      this.stop === undefined &&
      window.length < (this.options.holdBack?.() ? 1 : width) &&
      this.nextToAsk <= this.last &&
      (req.maxPages === undefined || this.asked < req.maxPages) &&
      // The first page alone: a one-page list costs no call more than without --parallel.
      (this.asked === 0 || this.yielded > 0 || window.some((a) => a.outcome !== undefined)) &&
      (this.nextToAsk <= this.known || this.guesses() < width - 1)
    );
  }
}
