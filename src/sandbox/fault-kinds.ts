// The names of the sandbox's malformed bodies alone, so the command tree can offer them
// without loading the sandbox.
export const MALFORMED_KINDS = ['html', 'truncated', 'text', 'data-object', 'bad-page', 'huge'] as const;
export type MalformedKind = (typeof MALFORMED_KINDS)[number];
