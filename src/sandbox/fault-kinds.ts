// The names of the sandbox's malformed bodies alone, so the command tree can offer them
// without loading the sandbox.
export const MALFORMED_KINDS = [
  'html',
  'truncated',
  'text',
  'data-object',
  'bad-page',
  'huge',
  // Paging the service may get wrong; page 1 is sound, so a run writes something first.
  'page-back',
  'page-repeat',
  'page-empty',
  'page-ignored',
  'page-items',
] as const;
export type MalformedKind = (typeof MALFORMED_KINDS)[number];

/** The kinds that bend a sound page's paging rather than break its body. */
const PAGING_KINDS = ['page-back', 'page-repeat', 'page-empty', 'page-ignored', 'page-items'] as const satisfies readonly MalformedKind[];
export type PagingKind = (typeof PAGING_KINDS)[number];

export const isPagingKind = (kind: MalformedKind | undefined): kind is PagingKind => (PAGING_KINDS as readonly string[]).includes(kind ?? '');
