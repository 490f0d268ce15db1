import { Option } from 'commander';
import type { ApiFlags } from './runner.js';
import { defineCommand, helpText } from '../../program/define.js';
import { limitOptions, outputOptions } from '../../program/options.js';

const collect = (value: string, previous: string[]): string[] => [...previous, value];

export const apiCommand = defineCommand<ApiFlags>({
  name: 'api',
  summary: 'Call any route as a raw request, like `gh api`: same auth, errors and output',
  arguments: [{ name: '<route>', description: 'route below /api, such as graph/get_followers' }],
  options: () => [
    new Option('-X, --method <method>', 'HTTP method').default('POST'),
    new Option('-f, --raw-field <key=value>', 'add a string field (repeatable)').default([]).argParser(collect),
    new Option('-F, --field <key=value>', 'add a typed field: numbers, true, false, null, @file (repeatable)').default([]).argParser(collect),
    new Option('--paginate', 'follow next_page until it is null, like --all'),
    new Option('-i, --include', 'print the status line and the headers of each answer before its body, like gh api -i'),
    ...outputOptions(true),
    ...limitOptions(),
  ],
  help: helpText({
    examples: [
      'sgq api graph/get_followers -f user=jack -f how=username -F page=1',
      'sgq api /api/info',
      'sgq api metadata/get_tweets -f user=jack -f how=username -F page=1 --paginate --limit 100',
    ],
  }),
  async handler(args, opts, ctx) {
    const { runApiCommand } = await import('./runner.js');
    return runApiCommand(ctx, args[0]!, opts);
  },
});
