import { Option } from 'commander';
import { SETTING_NAMES } from '../../../core/config.js';
import type { ConfigOptions } from './runner.js';
import { defineCommand, helpText, type CommandDefinition } from '../../program/define.js';

/** `config VERB`: each verb runs runner.ts with its own name. */
const verb = (name: string, summary: string, help: string, args: CommandDefinition['arguments'] = [], options?: () => Option[]): CommandDefinition =>
  defineCommand<ConfigOptions>({
    name,
    summary,
    arguments: args,
    help,
    ...(options ? { options } : {}),
    async handler(words, opts, ctx) {
      const { runConfigCommand } = await import('./runner.js');
      return runConfigCommand(ctx, name, words, opts);
    },
  });

export const configCommand = defineCommand({
  name: 'config',
  summary: 'Read and change the config store (profiles of settings)',
  subcommands: () => [
    verb('set', 'set a setting; api-key and notify (and a value not given) are read from stdin, with a hidden prompt on a terminal', helpText({
      notes: `Keys: ${SETTING_NAMES.join(', ')}`,
      examples: ['sgq config set base-url https://api.example.com', 'printf %s "$KEY" | sgq config set api-key --profile work', 'printf %s https://hooks.slack.com/services/T0/B0/XXXX | sgq config set notify'],
    }), [{ name: '<key>' }, { name: '[value]' }]),
    verb('get', 'print a setting (the API key and the notify URL are masked)', helpText({ examples: ['sgq config get base-url'] }), [{ name: '<key>' }]),
    verb('unset', 'remove a setting', helpText({ examples: ['sgq config unset output --profile work'] }), [{ name: '<key>' }]),
    verb(
      'list',
      'print the settings of the profile (the API key and the notify URL are masked); -o json: every setting, its value and where it comes from',
      helpText({ examples: ['sgq config list --profile work', "sgq config list -o json | jq '.settings[] | select(.source != null)'"] }),
      [],
      () => [new Option('-o, --output <format>', 'text: the profile\'s settings as name=value lines; json: every setting with its source').choices(['text', 'json'])],
    ),
    verb('path', 'print where the config file is', helpText({ examples: ['sgq config path'] })),
  ],
  help: helpText({
    examples: ['sgq config set base-url https://api.example.com', 'sgq config set api-key          # reads stdin; prompts without echo on a terminal', 'sgq config list --profile work'],
    footer: 'Precedence: flag > environment (SGQ_API_KEY, SGQ_BASE_URL, SGQ_PROFILE) > profile > default.',
  }),
});
