// Paging the service may get wrong, for `--malformed page-*`. Page 1 is always sound, so a
// run has written records before it meets the fault, as it would against a real service.
import type { PagingKind } from './fault-kinds.js';

/** The page whose records are served: `page-ignored` answers page 1 whatever was asked. */
export const servedPage = (kind: PagingKind | undefined, asked: number): number => (kind === 'page-ignored' ? 1 : asked);

/**
 * Bends the envelope of a page that was asked as `asked`:
 * - page-back: from page 2 on, next_page names page 1;
 * - page-repeat: from page 2 on, next_page names the page itself;
 * - page-empty: from page 2 on, no records, and next_page names the page after, without end;
 * - page-ignored: page 1's records on every page, next_page always the page after;
 * - page-items: page_items one more than the records sent.
 */
export function bendPaging(kind: PagingKind, body: Record<string, unknown>, asked: number): void {
  if (kind === 'page-items') {
    body.page_items = (body.data as unknown[]).length + 1;
    return;
  }
  if (asked < 2 && kind !== 'page-ignored') return;
  if (kind === 'page-back') body.next_page = 1;
  else if (kind === 'page-repeat') body.next_page = asked;
  else if (kind === 'page-empty') {
    body.data = [];
    body.page_items = 0;
    body.next_page = asked + 1;
  } else if (body.next_page !== null || asked > 1) body.next_page = asked + 1;
}
