import { readFileSync } from 'node:fs';
import { join } from 'node:path';

// The help of every command, as it prints into a pipe or a file (80 columns), is rendered by
// the build into dist/help/ (scripts/build.mjs), so that `sgq … --help` into a pipe prints a
// file instead of loading and running Commander (10-15 ms, a third of the start). At a terminal,
// help is built as before, to the terminal's width. A test checks every file against what
// Commander prints.

/** The file holding the help `argv` asks for (`[...command, '--help' | '-h']`), if it is one. */
export function helpFileName(argv: readonly string[]): string | undefined {
  const last = argv.at(-1);
  if (last !== '--help' && last !== '-h') return undefined;
  const command = argv.slice(0, -1);
  // Command names only: anything else (an option, a value, `../x`) goes the usual way.
  if (!command.every((word) => /^[a-z][a-z-]*$/.test(word))) return undefined;
  return `${['sgq', ...command].join('+')}.txt`;
}

/** The pre-rendered help for `argv`, or undefined (not a plain help request, or no such command). */
export function prerenderedHelp(distDir: string, argv: readonly string[]): string | undefined {
  const name = helpFileName(argv);
  if (name === undefined) return undefined;
  try {
    return readFileSync(join(distDir, 'help', name), 'utf8');
  } catch {
    return undefined;
  }
}
