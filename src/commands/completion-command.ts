import type { Command } from 'commander';
import { usageError } from '../errors.js';
import type { CommandContext } from '../program.js';

// Placeholder: the generator is being written (issue 5).
export async function runCompletionCommand(_ctx: CommandContext, shell: string, _program: Command): Promise<number> {
  throw usageError(`completion for ${shell} is not available yet`);
}
