import type { Command } from 'commander';
import { completionTree, walk, type OptionSpec } from '../../completion/tree.js';
import { SETTINGS, SETTING_DEFAULTS, SETTING_NAMES } from '../../../core/config.js';
import { EXIT_MEANINGS, ExitCode } from '../../../core/errors.js';
import { RECORD_FIELDS } from '../../../core/record-fields.js';
import { ROUTES, commandName, methodName } from '../../../core/routes.js';
import { VERSION } from '../../../core/version.js';
import type { CommandContext } from '../../program/context.js';
import { SCHEMA_NAMES, schemas, type SchemaName } from './schemas.js';
import { FORMATS } from '../../../core/format-names.js';
import { recordColumns, typedColumns } from '../../../parquet/declared.js';
import { environmentVariables } from '../../help/environment.js';
import { FORMAT_DESCRIPTIONS } from '../../help/value-meanings.js';

/** Bumped when a field of the document changes meaning or goes away; additions keep it. */
export const DESCRIBE_SCHEMA_VERSION = 1;

/** `sgq describe`: everything a program needs to drive sgq, as one JSON document on stdout. */
export function runDescribeCommand(ctx: CommandContext, program: Command, flags: { schema?: SchemaName }): number {
  const { io } = ctx;
  if (flags.schema) {
    io.stdout.write(`${JSON.stringify(schemas()[flags.schema], null, 2)}\n`);
    return ExitCode.ok;
  }
  io.stdout.write(`${JSON.stringify(describeProgram(program), null, 2)}\n`);
  return ExitCode.ok;
}

export function describeProgram(program: Command) {
  const tree = completionTree(program);
  return {
    schema_version: DESCRIBE_SCHEMA_VERSION,
    name: tree.program,
    version: VERSION,
    // `sgq --version` first, as before: the root's own option is accepted only before a command.
    global_options: [...tree.root.options, ...tree.globals].map(option),
    commands: walk(tree.root).slice(1).map((c) => ({
      name: c.path.join(' '),
      description: c.description,
      runnable: c.subcommands.length === 0,
      arguments: c.arguments.map((a) => ({
        name: a.name,
        description: a.description,
        required: a.required,
        variadic: a.variadic,
        ...(a.values.kind === 'words' ? { choices: a.values.words } : {}),
      })),
      options: c.options.map(option),
    })),
    settings: SETTING_NAMES.map((name) => ({
      name,
      env: SETTINGS[name].env,
      secret: SETTINGS[name].secret,
      description: SETTINGS[name].describe,
      ...(SETTING_DEFAULTS[name] !== undefined ? { default: SETTING_DEFAULTS[name] } : {}),
    })),
    environment: environmentVariables(),
    exit_codes: (Object.keys(ExitCode) as (keyof typeof ExitCode)[]).map((kind) => ({ code: ExitCode[kind], kind, meaning: EXIT_MEANINGS[kind] })),
    formats: FORMATS.map((name) => ({ name, description: FORMAT_DESCRIPTIONS[name] })),
    routes: ROUTES.map((r) => ({
      path: `/${r.path}`,
      command: commandName(r),
      library_method: r.namespace ? `${r.namespace}.${methodName(r.verb)}` : r.verb,
      paginated: r.paginated,
      needs_key: r.needsKey,
      cost: r.cost,
      // The public credit table shows no price: `cost` is sgq's assumption.
      cost_assumed: r.costAssumed,
      /** The fields its records are described with (`describe --schema ndjson` types them); others pass through. */
      fields: Object.keys(RECORD_FIELDS[r.records]),
      since: r.since,
      placeholder: r.placeholder,
      // The Parquet columns of its records (-o parquet, --dataset), declared by their description; sgq's own (query_user, fetched_at) aside.
      parquet_columns: typedColumns(recordColumns(r.records)),
    })),
    schemas: SCHEMA_NAMES,
  };
}

function option(o: OptionSpec) {
  return {
    flags: o.flags,
    name: o.long ?? o.short,
    description: o.description,
    type: o.type,
    ...(o.takesValue ? { value_name: o.valueName } : {}),
    ...(o.defaultValue !== undefined ? { default: o.defaultValue } : {}),
    ...(o.values.kind === 'words' ? { choices: o.values.words } : {}),
    repeatable: o.repeatable,
  };
}
