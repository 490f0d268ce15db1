import type { Command } from 'commander';
import { completionTree, walk, type OptionSpec } from '../completion/tree.js';
import { SETTINGS, SETTING_NAMES } from '../../core/config.js';
import { EXIT_MEANINGS, ExitCode } from '../../core/errors.js';
import { ROUTES, commandName, methodName } from '../../core/routes.js';
import { VERSION } from '../../core/version.js';
import type { CommandContext } from '../context.js';
import { SCHEMAS, SCHEMA_NAMES, type SchemaName } from '../schemas.js';

/** Bumped when a field of the document changes meaning or goes away; additions keep it. */
export const DESCRIBE_SCHEMA_VERSION = 1;

/** Variables sgq reads besides the settings' own. */
const ENVIRONMENT = [
  { name: 'SGQ_PROFILE', description: 'config profile to use (flag --profile)' },
  { name: 'SGQ_CONFIG_DIR', description: 'folder of config.json (default $XDG_CONFIG_HOME/sgq)' },
  { name: 'SGQ_STATE', description: 'file of the --since-last marks (flag --state)' },
  { name: 'SGQ_SANDBOX_SHAPE', description: "records of `--sandbox` runs: service (the default: the service's prefixed fields) or spec (username, last_checked)" },
  { name: 'SGQ_RETRY_AFTER_CAP', description: 'longest Retry-After waited without --max-wait, in seconds (default 60)' },
  { name: 'HTTP_PROXY', description: 'proxy for http:// services (also http_proxy)' },
  { name: 'HTTPS_PROXY', description: 'proxy for https:// services (also https_proxy)' },
  { name: 'ALL_PROXY', description: 'proxy for either, when the scheme\'s own is unset (also all_proxy)' },
  { name: 'NO_PROXY', description: 'hosts reached directly (also no_proxy)' },
  { name: 'NODE_EXTRA_CA_CERTS', description: 'extra trusted CA certificates (PEM file)' },
  { name: 'NO_COLOR', description: 'no colour on stderr' },
  { name: 'FORCE_COLOR', description: 'colour on stderr even when it is not a terminal' },
  { name: 'SGQ_PAGER', description: 'pager for output on a terminal, before PAGER (default less -FRX; empty or cat: none)' },
  { name: 'PAGER', description: 'pager for output on a terminal when SGQ_PAGER is unset' },
  { name: 'XDG_CACHE_HOME', description: 'folder of the --cache answers and the compiled-code cache (default ~/.cache; sgq uses its sgq/ folder)' },
  { name: 'NODE_DISABLE_COMPILE_CACHE', description: 'set and not empty: no compiled-code cache (sgq/code in the cache folder)' },
];

/** `sgq describe`: everything a program needs to drive sgq, as one JSON document on stdout. */
export function runDescribeCommand(ctx: CommandContext, program: Command, flags: { schema?: SchemaName }): number {
  const { io } = ctx;
  if (flags.schema) {
    io.stdout.write(`${JSON.stringify(SCHEMAS[flags.schema], null, 2)}\n`);
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
    global_options: tree.globals.map(option),
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
    settings: SETTING_NAMES.map((name) => ({ name, env: SETTINGS[name].env, secret: SETTINGS[name].secret, description: SETTINGS[name].describe })),
    environment: [...SETTING_NAMES.map((name) => ({ name: SETTINGS[name].env, description: `setting ${name}` })), ...ENVIRONMENT],
    exit_codes: (Object.keys(ExitCode) as (keyof typeof ExitCode)[]).map((kind) => ({ code: ExitCode[kind], kind, meaning: EXIT_MEANINGS[kind] })),
    routes: ROUTES.map((r) => ({
      path: `/${r.path}`,
      command: commandName(r),
      library_method: r.namespace ? `${r.namespace}.${methodName(r.verb)}` : r.verb,
      paginated: r.paginated,
      needs_key: r.needsKey,
      cost: r.cost,
      since: r.since,
      placeholder: r.placeholder,
    })),
    schemas: SCHEMA_NAMES,
  };
}

function option(o: OptionSpec) {
  return {
    flags: `${[o.short, o.long].filter(Boolean).join(', ')}${!o.takesValue ? '' : o.optionalValue ? ` [${o.valueName}]` : ` <${o.valueName}>`}`,
    name: o.long ?? o.short,
    description: o.description,
    type: o.type,
    ...(o.takesValue ? { value_name: o.valueName } : {}),
    ...(o.defaultValue !== undefined ? { default: o.defaultValue } : {}),
    ...(o.values.kind === 'words' ? { choices: o.values.words } : {}),
    repeatable: o.repeatable,
  };
}
