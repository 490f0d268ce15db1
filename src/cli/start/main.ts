import type { Command } from 'commander';
import { ExitCode, failureLine } from '../../core/errors.js';
import { failed } from './failure.js';
import type { Io } from './io.js';
import { visible } from '../terminal/visible.js';

export { processIo } from './io.js';
import { buildProgram } from '../program/program.js';
import { joinPairedOptions } from '../program/parsers.js';

/**
 * Runs sgq with `argv` (without the node and script entries) and returns the exit code.
 * It never calls process.exit and never throws, so tests run it in-process.
 */
export async function main(argv: readonly string[], io: Io): Promise<number> {
  const state = { exitCode: ExitCode.ok as number };
  const program = buildProgram(io, state);
  const unknown = unknownHelpSubject(program, argv);
  if (unknown !== undefined) {
    io.stderr.write(`sgq: ${visible(failureLine(`no help for ${JSON.stringify(unknown)}: it is neither a command nor a help topic`, 'see `sgq --help` for both'))}\n`);
    return ExitCode.usage;
  }
  try {
    await program.parseAsync(joinPairedOptions(helpAsFlag(argv)), { from: 'user' });
    return state.exitCode;
  } catch (error) {
    return failed(error, io);
  }
}

/**
 * `sgq help graph followers` as `sgq graph followers --help`: Commander's help command
 * reads only its first word and would show the help of `graph`. `sgq help help` is sgq's help.
 */
function helpAsFlag(argv: readonly string[]): string[] {
  if (argv[0] === 'help' && argv[1] === 'help') return ['--help'];
  return argv[0] === 'help' && argv.length > 2 ? [...argv.slice(1), '--help'] : [...argv];
}

/** `sgq help WORD` where WORD is no command or topic: Commander would print the whole root help. */
function unknownHelpSubject(program: Command, argv: readonly string[]): string | undefined {
  if (argv[0] !== 'help' || argv.length < 2 || argv[1]!.startsWith('-')) return undefined;
  // Commander's own `help` command is not among program.commands.
  const known = argv[1] === 'help' || program.commands.some((c) => c.name() === argv[1] || c.aliases().includes(argv[1]!));
  return known ? undefined : argv[1];
}
