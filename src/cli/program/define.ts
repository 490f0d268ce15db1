import type { Option } from 'commander';
import type { CommandContext } from './context.js';

// A command is data (as Wrangler's createCommand): its name, words, options and help, and a
// handler that loads what it runs on first use. program.ts turns each into a Commander
// command; `describe` and the completion scripts read that same tree.

export interface ArgumentDefinition {
  /** As Commander writes it: `<route>`, `[file]`, `<user...>`. */
  name: string;
  description?: string;
}

export interface CommandDefinition<Opts = Record<string, unknown>> {
  name: string;
  summary: string;
  arguments?: readonly ArgumentDefinition[];
  /** The usage line's words after the name, where Commander's own would mislead. */
  usage?: string;
  /** Built when the command is entered or a help lists it, never by a start-up that does not need them. */
  options?: () => readonly Option[];
  /** Built when the command is entered or its help is shown. */
  subcommands?: () => readonly CommandDefinition[];
  /** Printed after the options in the command's help. */
  help?: string;
  /** Runs the command; resolves to its exit code. Only the launcher exits the process. */
  handler?: (args: string[], opts: Opts, ctx: CommandContext) => Promise<number> | number;
}

/** Keeps a definition's handler typed against its own options. */
export function defineCommand<Opts>(definition: CommandDefinition<Opts>): CommandDefinition {
  return definition as unknown as CommandDefinition;
}

/** A help's closing part: notes, `Examples:` with `$ ` before each, and a footer. */
export function helpText({ notes, examples, footer }: { notes?: string; examples: readonly string[]; footer?: string }): string {
  const parts = [notes, `Examples:\n${examples.map((e) => `  $ ${e}`).join('\n')}`, footer].filter((p): p is string => p !== undefined);
  return `\n${parts.join('\n\n')}`;
}
