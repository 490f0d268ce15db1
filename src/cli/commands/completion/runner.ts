import type { Command } from 'commander';
import { SHELLS, completionScript, isShell } from '../../completion/scripts.js';
import { ConfigStore } from '../../../core/config.js';
import { ExitCode, usageError } from '../../../core/errors.js';
import type { CommandContext } from '../../program/context.js';

export interface CompletionOptions {
  /** Print the profile names instead, one a line: what the scripts run when TAB is pressed. */
  profiles?: boolean;
}

/** `sgq completion <shell>`: the script on stdout. `sgq completion --profiles`: the profile names. */
export async function runCompletionCommand(ctx: CommandContext, shell: string | undefined, program: Command, options: CompletionOptions = {}): Promise<number> {
  const { io } = ctx;
  if (options.profiles) {
    if (shell !== undefined) throw usageError('--profiles takes no shell', 'run `sgq completion --profiles` alone');
    // A name holding a line break cannot be one line; no shell could offer it anyway.
    const names = new ConfigStore(io.env).profileNames().filter((n) => !/[\r\n]/.test(n));
    io.stdout.write(names.map((n) => `${n}\n`).join(''));
    return ExitCode.ok;
  }
  const choices = SHELLS.join(', ');
  if (shell === undefined) throw usageError('name the shell', `use one of ${choices}, such as \`sgq completion bash\``);
  if (!isShell(shell)) throw usageError(`no completion for shell ${JSON.stringify(shell)}`, `use one of ${choices}`);
  io.stdout.write(completionScript(shell, program));
  return ExitCode.ok;
}
