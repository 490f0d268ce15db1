import { usageError } from '../../core/errors.js';
import type { JqOptions } from '../formats/formatter.js';

// The flags of --jq, read by every run; the filter's machinery (jq.ts: the subset, the batches,
// the worker's lane) loads only when there is a filter to run.

/** The flags of `--jq` as given on the command line. */
export interface JqFlags {
  jq?: string;
  slurp?: boolean;
  arg?: [string, string][];
  argjson?: [string, string][];
}

/** `--jq`'s options, or undefined without it; `--slurp`, `--arg` and `--argjson` need it. */
export function jqOptions(flags: JqFlags, stderr: (text: string) => void): JqOptions | undefined {
  if (flags.jq === undefined) {
    const orphan = flags.slurp ? '--slurp' : flags.arg ? '--arg' : flags.argjson ? '--argjson' : undefined;
    if (orphan) throw usageError(`${orphan} works with --jq only`, 'add --jq FILTER');
    return undefined;
  }
  return { filter: flags.jq, slurp: flags.slurp, args: flags.arg, argjson: flags.argjson, stderr };
}
