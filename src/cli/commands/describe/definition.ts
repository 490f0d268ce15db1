import { Option } from 'commander';
import { SCHEMA_NAMES, type SchemaName } from './schemas.js';
import { defineCommand, helpText } from '../../program/define.js';

export const describeCommand = defineCommand<{ schema?: SchemaName }>({
  name: 'describe',
  summary: 'Describe sgq for programs as one JSON document: commands, flags, settings, environment, exit codes, routes',
  options: () => [
    new Option('--json', 'print JSON (the only format)'),
    new Option('--schema <name>', 'print the JSON Schema of the summary or of the records of a format').choices(SCHEMA_NAMES),
  ],
  help: helpText({ examples: ["sgq describe --json | jq '.commands[].name'", "sgq describe --json | jq '.exit_codes'", 'sgq describe --schema summary'] }),
  async handler(_args, opts, ctx) {
    const { runDescribeCommand } = await import('./runner.js');
    return runDescribeCommand(ctx, ctx.tree(), opts);
  },
});
