import { ExitCode } from './errors.js';
import { keptTokens, numberValue, parsedLosslessly, stringifyJson, type Json, type KeptTokens } from './json.js';
import { CallError, isErrorRecord, isObject, type JsonObject } from './classify.js';
import type { Reply } from './client.js';

/** One answer of the service, checked and split into what goes to stdout and what to stderr. */
export interface Page {
  nextPage: number | null;
  records: JsonObject[];
  /** Error records of `data` that came beside good ones. */
  errors: string[];
  /** `current_credits` after the call, where reported. */
  credits: number | null;
  /** The body as received, for `--raw`. */
  text: string;
  /** Some number in it had to be kept as text (see json.ts); otherwise JSON.stringify is exact. */
  lossless: boolean;
  /** Where those numbers are in `text` (json.ts keptTokens), for whoever parses it again. */
  keptTokens?: KeptTokens;
  /** The HTTP status and headers it came with (`sgq api -i`). */
  status: number;
  headers: Record<string, string | string[]>;
  /** Came from the cache (`--cache`): not billed, and its balance is not today's. */
  cached: boolean;
  /** For a cached page, when it was asked for: its records are complete as of then, not now. */
  askedAt?: number;
  /** `page_items` as the service sent it (null when it sent none). */
  pageItems: number | null;
}

/** Whether the service bills this answer: spec §1 charges successful calls, not error records. */
export const isBilled = (page: Page): boolean => !page.cached && (page.records.length > 0 || page.errors.length === 0);

const PAGINATION_KEYS = ['page', 'previous_page', 'next_page', 'page_items'] as const;

export const invalid = (what: string) =>
  new CallError(ExitCode.network, `the service sent an unexpected body: ${what}`, 'a response hook shows the answer', false, undefined, [], { fix: 'see-answer' });

// `2.0` and `1E3` are whole numbers too: parseJson keeps their text, numberValue their value.
const isInteger = (v: Json | undefined) => Number.isInteger(numberValue(v));

/**
 * Checks the envelope of spec §2.1. `wholeBodyIsRecord` is for routes whose answer is not
 * documented to carry `data` (such as /info): then the body itself is the one record.
 */
export function readPage(reply: Reply, asked: number | null, wholeBodyIsRecord = false): Page {
  const { body } = reply;
  for (const key of PAGINATION_KEYS) {
    const value = body[key];
    if (value !== undefined && value !== null && !isInteger(value)) {
      throw invalid(`${key} is ${stringifyJson(value)}, not a whole number or null`);
    }
  }
  const creditsValue = body.current_credits;
  // A balance past the double range (1e400) is refused as a string is: it would be kept as null and shown as ∞.
  if (creditsValue !== undefined && creditsValue !== null && numberValue(creditsValue) === undefined) {
    throw invalid(`current_credits is ${stringifyJson(creditsValue)}, not a finite number`);
  }
  const credits = numberValue(creditsValue) ?? null;
  const nextPage = numberValue(body.next_page) ?? null;

  const { records, errors } = pageRecords(body, wholeBodyIsRecord);
  const pageItems = numberValue(body.page_items) ?? null;
  return { nextPage, records, errors, credits, text: reply.text, lossless: parsedLosslessly(body), keptTokens: keptTokens(body), status: reply.status, headers: reply.headers, cached: reply.cached === true, askedAt: reply.cached ? reply.askedAt ?? 0 : undefined, pageItems };
}

/** A page as its records were written, for whoever reads its text again (--dataset's worker thread). */
export interface PageText {
  /** The body as received. */
  text: string;
  /** How many of its records the run took (--limit may cut a page). */
  granted: number;
  /** The body itself is the one record (see readPage). */
  wholeBodyIsRecord: boolean;
  /** Some number in it had to be kept as text (Page.lossless); otherwise JSON.parse reads it exactly. */
  lossless: boolean;
  /** Where they are (Page.keptTokens): the text is parsed again without looking for them. */
  keptTokens?: KeptTokens;
}

/**
 * The records and the error records of a parsed body (spec §2.1: its `data`, or the body
 * itself where `wholeBodyIsRecord`). Pure, so that whoever reads a page's text again (the
 * dataset's worker thread) picks exactly the records the run printed.
 */
export function pageRecords(body: JsonObject, wholeBodyIsRecord: boolean): { records: JsonObject[]; errors: string[] } {
  let data: Json | undefined = body.data;
  if (data === undefined && wholeBodyIsRecord) data = [body];
  if (!Array.isArray(data)) throw invalid(data === undefined ? 'no data key' : 'data is not a list');
  const records: JsonObject[] = [];
  const errors: string[] = [];
  for (const item of data) {
    if (!isObject(item)) throw invalid(`data holds ${stringifyJson(item).slice(0, 40)}, not an object`);
    if (isErrorRecord(item)) errors.push(item.error);
    else records.push(item);
  }
  return { records, errors };
}

/**
 * What is wrong with the paging of a page asked as `asked`, if anything. Following a
 * next_page that does not move forward, or one named by a page that brought nothing, could
 * go on without end, and every page is billed: the run stops there instead.
 */
export function pagingProblem(page: Page, asked: number | null): string | undefined {
  const { nextPage } = page;
  if (nextPage === null || asked === null) return undefined;
  if (nextPage <= asked) return `next_page ${nextPage} does not move past page ${asked}`;
  if (page.records.length === 0 && page.errors.length === 0) return `page ${asked} holds no records but names page ${nextPage} as the next`;
  return undefined;
}

/** A `page_items` that disagrees with `data`: worth a note with --verbose, not an error. */
export function pageItemsNote(page: Page, asked: number | null): string | undefined {
  const held = page.records.length + page.errors.length;
  if (page.pageItems === null || page.pageItems === held) return undefined;
  return `page ${asked ?? 1}: page_items says ${page.pageItems}, data holds ${held}`;
}
