// What a line asks for, as far as the start needs to know before anything else is loaded:
// the entry answers `--version` at once, and each kind of run keeps its own code cache
// (src/cli/code-cache.ts), since each compiles different parts of sgq.

/** `sgq --version` (or `-V`) alone. */
export const asksForVersion = (argv: readonly string[]): boolean => argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V');

/** Help: no words at all, `help …`, or `--help`/`-h` anywhere. */
export const asksForHelp = (argv: readonly string[]): boolean => argv.length === 0 || argv[0] === 'help' || argv.includes('--help') || argv.includes('-h');
