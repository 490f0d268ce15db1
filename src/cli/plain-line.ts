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
 * where the line is Commander's to parse. `tree` gives the whole program to the commands that
 * walk it (describe, completion).
 */
export async function runPlainLine(argv: readonly string[], definitions: readonly CommandDefinition[], io: Io, tree: () => Command): Promise<number | undefined> {
  const fast = fastParse(argv, definitions, globalOptions());
  if (fast === undefined) return undefined;
  try {
    return await fast.definition.handler!(fast.args, fast.opts, createContext(io, fast.globals as GlobalOptions, tree));
  } catch (error) {
    return failed(error, io);
  }
}
