import type { Command } from 'commander';
import type { CommandDefinition } from './commands/define.js';
import { createContext, type GlobalOptions } from './context.js';
import { fastParse } from './fast-parse.js';
import { failed } from './failure.js';
import { globalOptions } from './global-options.js';
import type { Io } from './io.js';

/**
 * Runs a plain command line among `definitions` without Commander's program
 * (src/cli/fast-parse.ts) and resolves to its exit code, or to undefined, having done nothing,
 * where the line is Commander's to parse, or `accepts` refuses its values (a command's options
 * with the global ones). `tree` gives the whole program to the commands that walk it
 * (describe, completion).
 */
export async function runPlainLine(
  argv: readonly string[],
  definitions: readonly CommandDefinition[],
  io: Io,
  tree: () => Command,
  accepts?: (values: Record<string, unknown>) => boolean,
): Promise<number | undefined> {
  const fast = fastParse(argv, definitions, globalOptions());
  if (fast === undefined || (accepts && !accepts(fast.globals))) return undefined;
  try {
    return await runHandler(io, fast.definition, fast.args, fast.opts, fast.globals, tree);
  } catch (error) {
    return failed(error, io);
  }
}

/** Runs a command's handler in a context of its own (parsed here or by Commander); `tree` gives the whole program. */
export async function runHandler(io: Io, definition: CommandDefinition, args: string[], opts: Record<string, unknown>, globals: Record<string, unknown>, tree: () => Command): Promise<number> {
  return definition.handler!(args, opts, createContext(io, globals as GlobalOptions, tree));
}
