import { Option } from 'commander';
import type { CompletionOptions } from './runner.js';
import { defineCommand, helpText } from '../../program/define.js';

export const completionCommand = defineCommand<CompletionOptions>({
  name: 'completion',
  summary: 'Print a shell completion script generated from the command tree',
  // [shell] so that `--profiles` can stand alone; the handler insists on a shell otherwise.
  arguments: [{ name: '[shell]', description: 'bash, zsh or fish' }],
  usage: '<shell>',
  options: () => [new Option('--profiles', 'print the profile names, one a line (the scripts run this)').hideHelp()],
  help: helpText({
    examples: [
      'sgq completion bash > ~/.local/share/bash-completion/completions/sgq',
      'sgq completion zsh > "${fpath[1]}/_sgq"',
      'sgq completion fish > ~/.config/fish/completions/sgq.fish',
    ],
  }),
  async handler(args, opts, ctx) {
    const { runCompletionCommand } = await import('./runner.js');
    return runCompletionCommand(ctx, args[0], ctx.tree(), opts);
  },
});
