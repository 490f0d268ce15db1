import { defineCommand, helpText, type CommandDefinition } from '../../program/define.js';

const verb = (name: 'info' | 'clear', summary: string, examples: string[]): CommandDefinition =>
  defineCommand({
    name,
    summary,
    help: helpText({ examples }),
    async handler(_args, _opts, ctx) {
      const { runCacheCommand } = await import('./runner.js');
      return runCacheCommand(ctx, name);
    },
  });

export const cacheCommand = defineCommand({
  name: 'cache',
  summary: 'Show or clear the answers kept by --cache',
  subcommands: () => [
    verb('info', 'print where the cache is, its entries and their size in bytes', ['sgq cache info', 'sgq cache info | grep entries=']),
    verb('clear', 'remove every cached answer', ['sgq cache clear']),
  ],
  help: helpText({ examples: ['sgq cache info', 'sgq cache clear'] }),
});
