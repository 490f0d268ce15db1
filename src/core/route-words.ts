// The words that open a route's command line: its namespace (`sgq graph followers`), or the verb
// of a route of the default namespace (`sgq info`). Apart from the route table (routes.ts, which
// checks that they agree with it) so that what reads only these, the choice of a code cache
// entry before the CLI loads (src/cli/start/code-cache.ts), does not load the table with them.

export const NAMESPACES = ['graph', 'alpha', 'metadata', 'lists'] as const;

/** Verbs of the routes of the default namespace. */
export const TOP_LEVEL_VERBS = ['info'] as const;

/** Either kind of word, for the launcher's one lookup. */
export const ROUTE_WORDS: readonly string[] = [...NAMESPACES, ...TOP_LEVEL_VERBS];
