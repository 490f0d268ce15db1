import { CommanderError } from 'commander';
import { ExitCode, SgqError, failureLine, interruptedBy } from '../../core/errors.js';
import { cliError } from '../program/errors-to-flags.js';
import type { Io } from './io.js';
import { visible } from '../terminal/visible.js';

/** A run that threw: one line on stderr (what it quotes escaped, visible.ts), and the exit code that says what failed. */
export function failed(error: unknown, io: Io): number {
  if (error instanceof CommanderError) return commanderExitCode(error);
  // Whatever a stop made fail on its way out (a request given up, a stream closed) ends as the stop.
  const stopped = io.signal?.aborted && !(error instanceof SgqError);
  const sgq = stopped ? interruptedBy(io.signal!.reason) : cliError(error);
  io.stderr.write(`sgq: ${visible(failureLine(sgq.message, sgq.hint))}\n`);
  if (sgq.exitCode === ExitCode.internal && io.env.SGQ_DEBUG && error instanceof Error) io.stderr.write(`${visible(error.stack ?? '', '\n')}\n`);
  return sgq.exitCode;
}

function commanderExitCode(error: CommanderError): number {
  // --help and --version end normally; everything else Commander rejects is a usage error.
  if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.exitCode === 0) return ExitCode.ok;
  return ExitCode.usage;
}
