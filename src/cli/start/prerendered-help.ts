import { readFileSync } from 'node:fs';
import { join } from 'node:path';

// The help of every command, as it prints into a pipe or a file (80 columns), is rendered by
// the build into dist/help/ (scripts/build.mjs), so that `sgq … --help` into a pipe prints a
// file, served by bin/sgq.cjs before the CLI loads, instead of loading the CLI and running
// Commander: with the CLI's code cache, that was still 1.8x the CPU of `node -e 0` on Node 22
// (the restated target is 1.5x; a file is 1.05x). At a terminal, help is built as before, to the
// terminal's width. A test checks every file against what Commander prints.

/** The file holding the help `argv` asks for (`[...command, '--help' | '-h']`), if it is one. */
export function helpFileName(argv: readonly string[]): string | undefined {
  const last = argv.at(-1);
  if (last !== '--help' && last !== '-h') return undefined;
  const command = argv.slice(0, -1);
  // Command names only: anything else (an option, a value, `../x`) goes the usual way.
  if (!command.every((word) => /^[a-z][a-z-]*$/.test(word))) return undefined;
  return `${['sgq', ...command].join('+')}.txt`;
}

/** The pre-rendered help for `argv` into stdout, or undefined (not a plain help request, stdout a terminal, or no such command). */
export function prerenderedHelp(distDir: string, argv: readonly string[], stdoutIsTTY: () => boolean): string | undefined {
  const name = helpFileName(argv);
  if (name === undefined || stdoutIsTTY()) return undefined;
  try {
    return readFileSync(join(distDir, 'help', name), 'utf8');
  } catch {
    return undefined;
  }
}
