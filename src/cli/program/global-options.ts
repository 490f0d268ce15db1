import { Option } from 'commander';
import { nonEmpty, nonNegativeInt, positiveSeconds } from './parsers.js';

/** The options of `sgq` itself, which every command takes, wherever they stand on the line. */
export function globalOptions(): Option[] {
  return [
    new Option('--profile <name>', 'config profile to use (env SGQ_PROFILE)').argParser(nonEmpty('--profile')),
    new Option('--base-url <url>', 'service address (env SGQ_BASE_URL; default https://toto.oz.xyz)').argParser(nonEmpty('--base-url')),
    new Option('--sandbox', 'run against a built-in local sandbox with a demo key (no account needed)'),
    new Option('-q, --quiet', 'on success, print on stderr only what you asked for (--summary json, warn-credits) and what needs your action (data left out or not kept exactly)').conflicts('verbose'),
    new Option('-v, --verbose', 'trace requests, retries and the summary on stderr (never the API key)'),
    new Option('--timeout <seconds>', 'per-request time limit covering connect, headers and body (default 30)').argParser(positiveSeconds),
    new Option('--retries <n>', 'retries of a transient failure (default 3)').argParser(nonNegativeInt('--retries', 20)),
  ];
}
