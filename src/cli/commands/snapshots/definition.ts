import { Option } from 'commander';
import { defineCommand, helpText, type ArgumentDefinition, type CommandDefinition } from '../../program/define.js';
import { simpleShapeOptions, snapshotDirOption } from '../../program/options.js';
import { nonNegativeInt } from '../../program/parsers.js';
import type { SnapshotsFlags } from './runner.js';

const users: ArgumentDefinition = { name: '[user...]', description: 'only these users' };

const verb = (name: 'list' | 'prune', definition: Omit<CommandDefinition<SnapshotsFlags>, 'name' | 'handler'>): CommandDefinition =>
  defineCommand<SnapshotsFlags>({
    name,
    ...definition,
    async handler(args, opts, ctx) {
      const { runSnapshotsCommand } = await import('./runner.js');
      return runSnapshotsCommand(ctx, name, args, opts);
    },
  });

export const snapshotsCommand = defineCommand({
  name: 'snapshots',
  summary: 'List and prune the snapshots kept by --snapshot',
  subcommands: () => [
    verb('list', {
      summary: 'print what is stored: one record per snapshot',
      arguments: [users],
      options: () => [snapshotDirOption(), ...simpleShapeOptions()],
      help: helpText({ examples: ['sgq snapshots list', 'sgq snapshots list jack -o json'] }),
    }),
    verb('prune', {
      summary: 'keep the newest N snapshots of each user and remove the rest',
      arguments: [users],
      options: () => [new Option('--keep <n>', 'snapshots to keep per user and relation').argParser(nonNegativeInt('--keep')).makeOptionMandatory(), snapshotDirOption()],
      help: helpText({ examples: ['sgq snapshots prune --keep 30', 'sgq snapshots prune --keep 7 jack'] }),
    }),
  ],
  help: helpText({ examples: ['sgq snapshots list', 'sgq snapshots prune --keep 30'] }),
});
