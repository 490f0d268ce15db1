import { Option } from 'commander';
import { defineCommand, helpText } from '../../program/define.js';
import type { CreditsFlags } from './runner.js';

export const creditsCommand = defineCommand<CreditsFlags>({
  name: 'credits',
  summary: 'Print the last balance sgq saw for the profile on its service, from the runs before (no call, no credit spent)',
  options: () => [
    new Option('--refresh', 'ask the service with a free call (metadata/get_userid with the key) and record the answer'),
    new Option('--json', 'print the balance, when and where it was seen, as one JSON object'),
    new Option('--forget-prices', 'forget the prices sgq learned from the balances on this profile and service').conflicts(['refresh', 'json']),
  ],
  help: helpText({
    notes: 'Every run that gets a current_credits records it beside the config file (credits/@SERVICE/PROFILE/note.json), with the prices it observed: each service behind a profile, and the sandbox, has its own.',
    examples: ['sgq credits', 'sgq credits --refresh --profile work', 'sgq credits --json | jq .seen_at', 'sgq credits --forget-prices'],
  }),
  async handler(_args, opts, ctx) {
    const { runCreditsCommand } = await import('./runner.js');
    return runCreditsCommand(ctx, opts);
  },
});
