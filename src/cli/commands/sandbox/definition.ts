import { Option } from 'commander';
import { MALFORMED_KINDS } from '../../../sandbox/fault-kinds.js';
import { SHAPES } from '../../../sandbox/shapes.js';
import { defineCommand, helpText } from '../../program/define.js';
import { fraction, httpStatus, nonNegativeInt, positiveInt, positiveSeconds } from '../../program/parsers.js';
import type { SandboxFlags } from './runner.js';

export const sandboxCommand = defineCommand<SandboxFlags>({
  name: 'sandbox',
  summary: 'Serve a local stand-in of the whole service on 127.0.0.1',
  options: () => [
    new Option('--port <n>', 'port to listen on (default: a free one)').argParser(nonNegativeInt('--port', 65535)),
    new Option('--ttl <seconds>', 'stop by itself after this long').argParser(positiveSeconds),
    new Option('--prefix <path>', 'serve under a path prefix, as a gateway would (/social)'),
    new Option('--clock <iso>', 'timestamp of the newest follower (default: the start of this hour)'),
    new Option('--churn <rate>', 'followers come, go and flicker with the clock: about this fraction of a list leaves each day, as many come, as many more are missing for the day').argParser(fraction),
    new Option('--credits <n>', 'starting balance of the demo key').argParser(nonNegativeInt('--credits')),
    new Option('--shape <shape>', "records as the service shapes them (service, the default), or as the spec's two-field example (spec)").choices(SHAPES),
    new Option('--latency-ms <ms>', 'fault: added before every answer').argParser(nonNegativeInt('--latency-ms', 600_000)),
    new Option('--fail-first <n>', 'fault: the first N data requests fail').argParser(nonNegativeInt('--fail-first')),
    new Option('--fail-status <code>', 'fault: status of those failures (default 503; 429 sends Retry-After)').argParser(httpStatus),
    new Option('--fail-rate <r>', 'fault: fraction of data requests answering 503').argParser(fraction),
    new Option('--reset-rate <r>', 'fault: fraction of data requests whose connection is reset').argParser(fraction),
    new Option('--hang-rate <r>', 'fault: fraction of data requests never answered').argParser(fraction),
    new Option('--rate-limit-rate <r>', 'fault: fraction of data requests answering 429 with Retry-After').argParser(fraction),
    new Option('--retry-after <seconds>', 'fault: Retry-After sent with 429 (default 1), and with 503 when given').argParser(nonNegativeInt('--retry-after', 3600)),
    new Option('--fail-page <n>', 'fault: every request for page N answers 500').argParser(positiveInt('--fail-page')),
    new Option('--malformed <kind>', 'fault: every data answer is malformed').choices(MALFORMED_KINDS),
    new Option('--error-status <code>', 'HTTP status of answers carrying error records (default 200)').argParser(httpStatus),
    new Option('--seed <n>', 'seed of the fault rates (default 1)').argParser(nonNegativeInt('--seed')),
    new Option('--trial', "act as a trial account: past a route's published requests an hour, answer the 429 \"API rate limit exceeded\""),
    new Option('--trial-limits <pairs>', 'act as a trial account with these requests an hour, as route=requests pairs (graph/get_followers=3)'),
    new Option('--detach', 'serve from a process of its own and return; prints export lines with SGQ_SANDBOX_PID'),
  ],
  help: helpText({
    notes: 'Prints `export SGQ_BASE_URL=…` and `export SGQ_API_KEY=…` on stdout, lines a shell can source.',
    examples: [
      'eval "$(sgq sandbox --detach)"; sgq graph followers jack; kill "$SGQ_SANDBOX_PID"',
      'eval "$(sgq sandbox --detach --fail-page 2)"; sgq graph followers jack --all; kill "$SGQ_SANDBOX_PID"   # sgq exits 7: page 2 fails',
      'sgq sandbox --port 8787 --reset-rate 0.2 --seed 3',
      'sgq sandbox --shape spec --malformed page-empty',
      'sgq sandbox --trial-limits graph/get_followers=2',
      'sgq sandbox --churn 0.05 --clock 2026-11-02T03:15:00Z   # lists as they are that night',
    ],
  }),
  async handler(_args, opts, ctx) {
    const { runSandboxCommand } = await import('./runner.js');
    return runSandboxCommand(ctx, opts);
  },
});
