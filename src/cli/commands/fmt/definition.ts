import { Option } from 'commander';
import { defineCommand, helpText } from '../../program/define.js';
import type { FmtFlags } from './runner.js';
import { shapeOptions, waitLockOption } from '../../program/options.js';
import { nonEmpty } from '../../program/parsers.js';

export const fmtCommand = defineCommand<FmtFlags>({
  name: 'fmt',
  summary: 'Re-render what sgq wrote before (NDJSON records or --raw bodies) in another shape, offline: no config, no request',
  arguments: [{ name: '[file]', description: 'the file to read; - or nothing reads stdin' }],
  options: () => [...shapeOptions(), new Option('--out <file>', 'write to FILE, replaced only when the whole input was rendered').argParser(nonEmpty('--out')), waitLockOption()],
  help: helpText({
    examples: [
      'sgq graph followers jack --all --out jack.ndjson',
      'sgq fmt jack.ndjson -o csv --fields follower_username,follower_last_checked',
      "sgq fmt jack.ndjson --jq 'select(.follower_num_followers > 1000) | .follower_username'",
      'sgq graph followers jack --all --raw > pages.ndjson; sgq fmt pages.ndjson -o json',
    ],
  }),
  async handler(args, opts, ctx) {
    const { runFmtCommand } = await import('./runner.js');
    return runFmtCommand(ctx, args[0], opts);
  },
});
