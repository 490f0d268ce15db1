import { Option } from 'commander';
import { defineCommand, helpText } from './define.js';

export const creditsCommand = defineCommand<{ refresh?: boolean; json?: boolean }>({
  name: 'credits',
  summary: 'Print the last balance sgq saw for the profile, from the runs before (no call, no credit spent)',
  options: () => [
    new Option('--refresh', 'ask the service with a free call (metadata/get_userid with the key) and record the answer'),
    new Option('--json', 'print the balance, when and where it was seen, as one JSON object'),
  ],
  help: helpText({
    notes: 'Every run that gets a current_credits records it beside the config file (credits.json; another profile than default in credits.PROFILE.json), with the prices it observed.',
    examples: ['sgq credits', 'sgq credits --refresh --profile work', 'sgq credits --json | jq .seen_at'],
  }),
  async handler(_args, opts, ctx) {
    const { runCreditsCommand } = await import('./credits-command.js');
    return runCreditsCommand(ctx, opts);
  },
});
