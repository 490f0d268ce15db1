import type { Json } from './json.js';
import type { Budget } from './budget.js';
import { CallError } from './classify.js';
import type { ApiClient } from './client.js';
import { isBilled, readPage, type Page } from './page.js';

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
}

/**
 * Pages are the basic unit (as in octokit's paginate): one request each, in order, asked
 * only when the consumer wants the next one, so a `break` stops further requests.
 */
export async function* fetchPages(client: ApiClient, req: PageRequest, budget: Budget, signal?: AbortSignal): AsyncGenerator<FetchedPage, StopReason> {
  let page: number | null = req.paginated ? req.startPage : null;
  for (let fetched = 0; ; fetched++) {
    if (req.maxPages !== undefined && fetched >= req.maxPages) return 'max-pages';
    const grant = await budget.acquire(signal);
    if (grant !== 'go') return grant;
    let result: FetchedPage;
    try {
      const reply = await client.call(req.path, req.payload(page), { sendKey: req.sendKey, method: req.method });
      const read = readPage(reply, page, req.wholeBodyIsRecord);
      const granted = budget.settleCall(isBilled(read), read.cached ? null : read.credits, { records: read.records.length, full: read.nextPage !== null });
      result = { ...read, granted, asked: page };
    } catch (error) {
      budget.settleCall(false, null);
      throw error instanceof CallError ? new PageFailure(page, error) : error;
    }
    yield result;
    // A page cut by --limit was not fetched whole, even when it was the last one.
    if (result.granted < result.records.length) return 'limit';
    if (result.nextPage === null) return 'done';
    if (budget.recordsLeft <= 0) return 'limit';
    if (!req.follow) return 'more';
    page = result.nextPage;
  }
}
