import { Option } from 'commander';
import { defineCommand, helpText } from '../../program/define.js';
import { simpleShapeOptions, waitLockOption } from '../../program/options.js';
import type { DatasetFlags } from './runner.js';
import { usageError } from '../../../core/errors.js';

const dir = { name: '<dir>', description: 'the dataset folder (as given to --dataset)' };

/** `--before 2025-01-31`: a day, as the partitions name it. */
function day(value: string): string {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(Date.parse(`${value}T00:00:00Z`))) throw usageError(`invalid --before ${JSON.stringify(value)}`, 'use a day such as 2025-01-31');
  return value;
}

const verb = (name: 'info' | 'compact', definition: Omit<Parameters<typeof defineCommand<DatasetFlags>>[0], 'name' | 'handler'>) =>
  defineCommand<DatasetFlags>({
    name,
    ...definition,
    async handler(args, opts, ctx) {
      const { runDatasetCommand } = await import('./runner.js');
      return runDatasetCommand(ctx, name, args[0]!, opts);
    },
  });

export const datasetCommand = defineCommand({
  name: 'dataset',
  summary: 'Inspect and compact the Parquet dataset written by --dataset',
  subcommands: () => [
    verb('info', {
      summary: "list the partitions: kind, route, date, files, rows, bytes and files whose columns differ from the route's",
      arguments: [dir],
      options: () => [
        new Option('--schema', "list each route's columns and their types instead: its own, sgq's, and the fields it does not declare"),
        new Option('--files', "list each file instead, with how its columns differ from its route's (written by an older sgq)"),
        ...simpleShapeOptions(),
      ],
      help: helpText({ examples: ['sgq dataset info ~/sgq-data', 'sgq dataset info ~/sgq-data --schema', 'sgq dataset info ~/sgq-data --files -o json'] }),
    }),
    verb('compact', {
      summary: "rewrite files of an older sgq in their route's columns and merge each partition's files into one; readers see the old files or the new ones",
      arguments: [dir],
      options: () => [new Option('--before <date>', 'only the days before DATE (YYYY-MM-DD, UTC)').argParser(day), waitLockOption()],
      help: helpText({ examples: ['sgq dataset compact ~/sgq-data', 'sgq dataset compact ~/sgq-data --before 2025-01-31'] }),
    }),
  ],
  help: helpText({ examples: ['sgq graph followers jack --all --dataset ~/sgq-data > /dev/null', 'sgq dataset info ~/sgq-data', 'sgq dataset compact ~/sgq-data'] }),
});
