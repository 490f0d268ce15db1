import { Command, Option } from 'commander';
import type { Io } from './io.js';
import { NAMESPACES, ROUTES, commandName, namespaceSummary, type RouteSpec } from '../core/routes.js';
import { cacheTtl, fieldList, fraction, httpStatus, namedValue, nonEmpty, nonNegativeInt, positiveInt, positiveSeconds, waitDuration } from './commands/parsers.js';
import { FORMATS } from '../core/format-names.js';
import { MALFORMED_KINDS } from '../sandbox/fault-kinds.js';
import { VERSION } from '../core/version.js';
import { SCHEMA_NAMES } from './schemas.js';

// The command tree. Only Commander and the route table load at start-up; each action
// imports what it needs, so `sgq --help` never loads the network stack.

export interface GlobalOptions {
  profile?: string;
  baseUrl?: string;
  sandbox?: boolean;
  quiet?: boolean;
  verbose?: boolean;
  timeout?: number;
  retries?: number;
}

/** What every action receives: the streams, the global flags, and where to put its exit code. */
export interface CommandContext {
  io: Io;
  globals: GlobalOptions;
}

type State = { exitCode: number };

export function buildProgram(io: Io, state: State): Command {
  const program = new Command('sgq')
    .description('Query the Social Graph and Metadata Query Service: followers, following, scores, metadata, posts and lists.')
    .version(VERSION, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .addOption(new Option('--profile <name>', 'config profile to use (env SGQ_PROFILE)').argParser(nonEmpty('--profile')))
    .addOption(new Option('--base-url <url>', 'service address (env SGQ_BASE_URL)').argParser(nonEmpty('--base-url')))
    .option('--sandbox', 'run against a built-in local sandbox with a demo key (no account needed)')
    .addOption(new Option('-q, --quiet', 'print nothing on stderr unless something fails or data is left out').conflicts('verbose'))
    .option('-v, --verbose', 'trace requests, retries and the summary on stderr (never the API key)')
    .addOption(new Option('--timeout <seconds>', 'per-request time limit covering connect, headers and body (default 30)').argParser(positiveSeconds))
    .addOption(new Option('--retries <n>', 'retries of a transient failure (default 3)').argParser(nonNegativeInt('--retries', 20)))
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      // Help fits the terminal it goes to and is 80 columns into a pipe or a file, as the Io
      // says (not process.stdout): the build pre-renders the pipe's help this way.
      getOutHelpWidth: () => (io.stdoutIsTTY ? (io.stdout as { columns?: number }).columns : undefined) ?? 80,
      getErrHelpWidth: () => (io.stderrIsTTY ? (io.stderr as { columns?: number }).columns : undefined) ?? 80,
      // Commander's own errors become one line in sgq's voice, with the way to help.
      // One line: the suggestion joins it, and a closing full stop does not meet the `;`.
      outputError: (text, write) => write(`sgq: ${oneLine(text.replace(/^error: /, ''))}; see \`sgq --help\`\n`),
    })
    .addHelpText('after', `
Examples:
  $ sgq --sandbox graph followers jack --all -o ndjson | jq -r .username
  $ sgq config set base-url https://api.example.com
  $ sgq config set api-key                 # reads the key from stdin, stays out of history
  $ sgq graph followers jack --all --out jack-followers.ndjson
  $ sgq metadata userid jack dorsey -o csv

Exit codes: 0 ok, 1 internal, 2 usage, 3 config or key rejected, 4 service error record,
5 subscription expired, 6 route not available, 7 network or server failure,
8 --out or state file in use by another run, 130 interrupted (143 on SIGTERM).
See the README for the full table.`);

  const context = (cmd: Command): CommandContext => ({ io, globals: cmd.optsWithGlobals() as GlobalOptions });
  const run = (fn: (cmd: Command) => Promise<number>) => async (...args: unknown[]) => {
    const cmd = args[args.length - 1] as Command;
    state.exitCode = await fn(cmd);
  };

  // Route commands and their many options are built only when their namespace is entered
  // (or its help shown): `sgq --help` and `sgq --version` do not pay for all of them.
  for (const ns of NAMESPACES) {
    const verbs = ROUTES.filter((r) => r.namespace === ns);
    const group = program.command(ns).description(namespaceSummary[ns]);
    group.addHelpText('after', `\nExamples:\n${verbs.map((r) => `  $ sgq ${commandName(r)} ${r.subject === 'list' ? '1234567890' : 'jack'}`).join('\n')}\n  $ sgq ${ns} ${verbs[0]!.verb} --help`);
    defer(group, () => {
      // Each verb's options only when it is run (or the namespace's help lists them all).
      for (const route of verbs) {
        const verb = group.command(route.verb).description(route.summary);
        defer(verb, () => routeCommand(verb, route));
      }
      group.hook('preSubcommand', (_group, sub) => fill(sub));
    });
    // Its help lists every verb with its arguments: build them all (also for `sgq help graph`,
    // which shows it without entering it).
    group.on('beforeHelp', () => {
      fill(group);
      group.commands.forEach(fill);
    });
  }
  for (const route of ROUTES.filter((r) => !r.namespace)) routeCommand(program.command(route.verb), route);

  function routeCommand(cmd: Command, route: RouteSpec): void {
    cmd.description(route.summary);
    addRouteOptions(cmd, route);
    cmd.action(
      run(async (c) => {
        const { runRouteCommand } = await import('./commands/route-command.js');
        return runRouteCommand(context(c), route, c.args, c.opts());
      }),
    );
  }

  const api = program
    .command('api')
    .description('Call any route as a raw request, like `gh api`: same auth, errors and output')
    .argument('<route>', 'route below /api, such as graph/get_followers')
    .action(
      run(async (c) => {
        const { runApiCommand } = await import('./commands/api-command.js');
        return runApiCommand(context(c), c.args[0]!, c.opts());
      }),
    );
  defer(api, () => {
    api
      .addOption(new Option('-X, --method <method>', 'HTTP method').default('POST'))
      .option('-f, --raw-field <key=value>', 'add a string field (repeatable)', collect, [])
      .option('-F, --field <key=value>', 'add a typed field: numbers, true, false, null, @file (repeatable)', collect, [])
      .option('--paginate', 'follow next_page until it is null, like --all')
      .option('-i, --include', 'print the status line and the headers of each answer before its body, like gh api -i');
    addOutputOptions(api, true);
    addLimitOptions(api);
    api.addHelpText('after', `
Examples:
  $ sgq api graph/get_followers -f user=jack -f how=username -F page=1
  $ sgq api /api/info
  $ sgq api metadata/get_tweets -f user=jack -f how=username -F page=1 --paginate --limit 100`);
  });

  const config = program.command('config').description('Read and change the config store (profiles of settings)')
    .addHelpText('after', '\nExamples:\n  $ sgq config set base-url https://api.example.com\n  $ sgq config set api-key          # reads stdin; prompts without echo on a terminal\n  $ sgq config list --profile work\n\nPrecedence: flag > environment (SGQ_API_KEY, SGQ_BASE_URL, SGQ_PROFILE) > profile > default.');
  const configAction = (verb: string) =>
    run(async (c) => {
      const { runConfigCommand } = await import('./commands/config-command.js');
      return runConfigCommand(context(c), verb, c.args);
    });
  defer(config, () => {
    config.command('set').description('set a setting; api-key (and a value not given) is read from stdin, with a hidden prompt on a terminal').argument('<key>').argument('[value]').action(configAction('set'))
      .addHelpText('after', '\nKeys: api-key, base-url, output, timeout, retries, snapshot-dir, parallel, warn-credits, cache\n\nExamples:\n  $ sgq config set base-url https://api.example.com\n  $ printf %s "$KEY" | sgq config set api-key --profile work');
    config.command('get').description('print a setting (the API key is masked)').argument('<key>').action(configAction('get'))
      .addHelpText('after', '\nExamples:\n  $ sgq config get base-url');
    config.command('unset').description('remove a setting').argument('<key>').action(configAction('unset'))
      .addHelpText('after', '\nExamples:\n  $ sgq config unset output --profile work');
    config.command('list').description('print the settings of the profile (the API key is masked)').action(configAction('list'))
      .addHelpText('after', '\nExamples:\n  $ sgq config list --profile work');
    config.command('path').description('print where the config file is').action(configAction('path'))
      .addHelpText('after', '\nExamples:\n  $ sgq config path');
  });

  program
    .command('credits')
    .description('Print the last balance sgq saw for the profile, from the runs before (no call, no credit spent)')
    .option('--refresh', 'ask the service with a free call (metadata/get_userid with the key) and record the answer')
    .option('--json', 'print the balance, when and where it was seen, as one JSON object')
    .addHelpText('after', `
Every run that gets a current_credits records it beside the config file (credits.json).

Examples:
  $ sgq credits
  $ sgq credits --refresh --profile work
  $ sgq credits --json | jq .seen_at`)
    .action(
      run(async (c) => {
        const { runCreditsCommand } = await import('./commands/credits-command.js');
        return runCreditsCommand(context(c), c.opts());
      }),
    );

  const cache = program.command('cache').description('Show or clear the answers kept by --cache')
    .addHelpText('after', '\nExamples:\n  $ sgq cache info\n  $ sgq cache clear');
  const cacheAction = (verb: 'info' | 'clear') =>
    run(async (c) => {
      const { runCacheCommand } = await import('./commands/cache-command.js');
      return runCacheCommand(context(c), verb);
    });
  cache.command('info').description('print where the cache is, its entries and their size in bytes').action(cacheAction('info'))
    .addHelpText('after', '\nExamples:\n  $ sgq cache info\n  $ sgq cache info | grep entries=');
  cache.command('clear').description('remove every cached answer').action(cacheAction('clear'))
    .addHelpText('after', '\nExamples:\n  $ sgq cache clear');

  const sandbox = program
    .command('sandbox')
    .description('Serve a local stand-in of the whole service on 127.0.0.1')
    .action(
      run(async (c) => {
        const { runSandboxCommand } = await import('./commands/sandbox-command.js');
        return runSandboxCommand(context(c), c.opts());
      }),
    );
  defer(sandbox, () => {
    sandbox
      .addOption(new Option('--port <n>', 'port to listen on (default: a free one)').argParser(nonNegativeInt('--port', 65535)))
      .addOption(new Option('--ttl <seconds>', 'stop by itself after this long').argParser(positiveSeconds))
      .option('--prefix <path>', 'serve under a path prefix, as a gateway would (/social)')
      .option('--clock <iso>', 'timestamp of the newest follower (default: the start of this hour)')
      .addOption(new Option('--credits <n>', 'starting balance of the demo key').argParser(nonNegativeInt('--credits')))
      .addOption(new Option('--latency-ms <ms>', 'fault: added before every answer').argParser(nonNegativeInt('--latency-ms', 600_000)))
      .addOption(new Option('--fail-first <n>', 'fault: the first N data requests fail').argParser(nonNegativeInt('--fail-first')))
      .addOption(new Option('--fail-status <code>', 'fault: status of those failures (default 503; 429 sends Retry-After)').argParser(httpStatus))
      .addOption(new Option('--fail-rate <r>', 'fault: fraction of data requests answering 503').argParser(fraction))
      .addOption(new Option('--reset-rate <r>', 'fault: fraction of data requests whose connection is reset').argParser(fraction))
      .addOption(new Option('--hang-rate <r>', 'fault: fraction of data requests never answered').argParser(fraction))
      .addOption(new Option('--rate-limit-rate <r>', 'fault: fraction of data requests answering 429 with Retry-After').argParser(fraction))
      .addOption(new Option('--retry-after <seconds>', 'fault: Retry-After sent with 429 (default 1), and with 503 when given').argParser(nonNegativeInt('--retry-after', 3600)))
      .addOption(new Option('--fail-page <n>', 'fault: every request for page N answers 500').argParser(positiveInt('--fail-page')))
      .addOption(new Option('--malformed <kind>', 'fault: every data answer is malformed').choices(MALFORMED_KINDS))
      .addOption(new Option('--error-status <code>', 'HTTP status of answers carrying error records (default 200)').argParser(httpStatus))
      .addOption(new Option('--seed <n>', 'seed of the fault rates (default 1)').argParser(nonNegativeInt('--seed')))
      .option('--detach', 'serve from a process of its own and return; prints export lines with SGQ_SANDBOX_PID')
      .addHelpText('after', `
Prints \`export SGQ_BASE_URL=…\` and \`export SGQ_API_KEY=…\` on stdout, lines a shell can source.

Examples:
  $ eval "$(sgq sandbox --detach)"; sgq graph followers jack; kill "$SGQ_SANDBOX_PID"
  $ sgq sandbox --port 8787 &
  $ SGQ_BASE_URL=http://127.0.0.1:8787 SGQ_API_KEY=sgq-demo-key sgq graph followers jack
  $ sgq sandbox --reset-rate 0.2 --fail-page 7 --seed 3`);
  });

  const diff = program
    .command('diff')
    .description('Followers gained and lost between the last two snapshots of a user, or between two exports')
    .argument('<user-or-file...>', 'users (- reads them from stdin), or two files: OLD NEW (NDJSON, JSON, CSV; gzip too)')
    .action(
      run(async (c) => {
        const { runDiffCommand } = await import('./commands/diff-command.js');
        return runDiffCommand(context(c), c.args, c.opts());
      }),
    );
  defer(diff, () => {
    diff
      .option('--following', 'compare snapshots of the accounts a user follows')
      .addOption(new Option('--how <kind>', 'the --how the snapshots were taken with (default username)').argParser(nonEmpty('--how')))
      .option('--at <date>', 'compare the last snapshot taken by DATE (a date means its end) with the one before')
      .addOption(new Option('--key <field>', 'the field that identifies a record (default username)').argParser(nonEmpty('--key')))
      .option('--changed', 'also print records whose other fields changed, as "change":"changed"')
      .addOption(new Option('--snapshot-dir <dir>', 'where snapshots are kept (default: $XDG_DATA_HOME/sgq/snapshots)').argParser(nonEmpty('--snapshot-dir')))
      .addOption(new Option('-o, --output <format>', 'table, json, ndjson or csv (default: table on a terminal, else ndjson)').choices(FORMATS))
      .addOption(new Option('--fields <list>', 'comma-separated fields to print, in this order').argParser(fieldList))
      .addOption(new Option('--out <file>', 'write to FILE, replaced only when the diff succeeds').argParser(nonEmpty('--out')))
      .addHelpText('after', `
Prints one record per change, {"change":"gained"|"lost", ...the record}; a summary on stderr.

Examples:
  $ sgq diff jack
  $ sgq diff jack --following --at 2026-11-20
  $ sgq diff old.ndjson new.ndjson.gz --key username
  $ sgq diff jack --changed -o csv`);
  });

  const snapshots = program.command('snapshots').description('List and prune the snapshots kept by --snapshot')
    .addHelpText('after', '\nExamples:\n  $ sgq snapshots list\n  $ sgq snapshots prune --keep 30');
  const snapshotsAction = (verb: string) =>
    run(async (c) => {
      const { runSnapshotsCommand } = await import('./commands/snapshots-command.js');
      return runSnapshotsCommand(context(c), verb, c.args, c.opts());
    });
  defer(snapshots, () => {
    const dirOption = () => new Option('--snapshot-dir <dir>', 'where snapshots are kept (default: $XDG_DATA_HOME/sgq/snapshots)').argParser(nonEmpty('--snapshot-dir'));
    snapshots.command('list').description('print what is stored: one record per snapshot').argument('[user...]', 'only these users')
      .addOption(dirOption())
      .addOption(new Option('-o, --output <format>', 'table, json, ndjson or csv (default: table on a terminal, else ndjson)').choices(FORMATS))
      .addOption(new Option('--fields <list>', 'comma-separated fields to print, in this order').argParser(fieldList))
      .action(snapshotsAction('list'))
      .addHelpText('after', '\nExamples:\n  $ sgq snapshots list\n  $ sgq snapshots list jack -o json');
    snapshots.command('prune').description('keep the newest N snapshots of each user and remove the rest').argument('[user...]', 'only these users')
      .addOption(new Option('--keep <n>', 'snapshots to keep per user and relation').argParser(nonNegativeInt('--keep')).makeOptionMandatory())
      .addOption(dirOption())
      .action(snapshotsAction('prune'))
      .addHelpText('after', '\nExamples:\n  $ sgq snapshots prune --keep 30\n  $ sgq snapshots prune --keep 7 jack');
  });

  const fmt = program
    .command('fmt')
    .description('Re-render what sgq wrote before (NDJSON records or --raw bodies) in another shape, offline: no config, no request')
    .argument('[file]', 'the file to read; - or nothing reads stdin')
    .action(
      run(async (c) => {
        const { runFmtCommand } = await import('./commands/fmt-command.js');
        return runFmtCommand(context(c), c.args[0], c.opts());
      }),
    );
  defer(fmt, () => {
    addShapeOptions(fmt);
    fmt.addOption(new Option('--out <file>', 'write to FILE, replaced only when the whole input was rendered').argParser(nonEmpty('--out')));
    fmt.addHelpText('after', `
Examples:
  $ sgq fmt jack.ndjson -o csv --fields username,last_checked
  $ sgq fmt jack.ndjson --jq 'select(.username | startswith("a")) | .username'
  $ sgq graph followers jack --all --raw > pages.ndjson; sgq fmt pages.ndjson -o table`);
  });

  program
    .command('describe')
    .description('Describe sgq for programs as one JSON document: commands, flags, settings, environment, exit codes, routes')
    .option('--json', 'print JSON (the only format)')
    .addOption(new Option('--schema <name>', 'print the JSON Schema of the summary or of the records of a format').choices(SCHEMA_NAMES))
    .addHelpText('after', `
Examples:
  $ sgq describe --json | jq '.commands[].name'
  $ sgq describe --json | jq '.exit_codes'
  $ sgq describe --schema summary`)
    .action(
      run(async (c) => {
        const { runDescribeCommand } = await import('./commands/describe-command.js');
        fillAll(program);
        return runDescribeCommand(context(c), program, c.opts());
      }),
    );

  program
    .command('completion')
    .description('Print a shell completion script generated from the command tree')
    // [shell] so that `--profiles` can stand alone; the action insists on a shell otherwise.
    .argument('[shell]', 'bash, zsh or fish')
    .usage('<shell>')
    .addOption(new Option('--profiles', 'print the profile names, one a line (the scripts run this)').hideHelp())
    .addHelpText('after', `
Examples:
  $ sgq completion bash > ~/.local/share/bash-completion/completions/sgq
  $ sgq completion zsh > "\${fpath[1]}/_sgq"
  $ sgq completion fish > ~/.config/fish/completions/sgq.fish`)
    .action(
      run(async (c) => {
        const { runCompletionCommand } = await import('./commands/completion-command.js');
        fillAll(program);
        return runCompletionCommand(context(c), c.args[0], program, c.opts());
      }),
    );

  program.hook('preSubcommand', (_program, sub) => fill(sub));
  for (const cmd of program.commands) cmd.on('beforeHelp', () => fill(cmd));
  return program;

  function defer(cmd: Command, build: () => void): void {
    fillers.set(cmd, build);
  }
}

// Deferred parts of the tree: a command's builder runs once, when the command is about to
// parse or show its help, or when completions walk the whole tree.
const fillers = new WeakMap<Command, () => void>();

function fill(cmd: Command): void {
  const build = fillers.get(cmd);
  if (!build) return;
  fillers.delete(cmd);
  build();
}

/** Builds every deferred command below `cmd`, for code that walks the whole tree. */
export function fillAll(cmd: Command): void {
  fill(cmd);
  for (const sub of cmd.commands) fillAll(sub);
}

function oneLine(text: string): string {
  return text.trim().replace(/\s*\n\s*/g, ' ').replace('(Did you mean', '(did you mean').replace(/\.$/, '');
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

export function allCommands(root: Command): Command[] {
  return [root, ...root.commands.flatMap((c) => allCommands(c))];
}

function addRouteOptions(cmd: Command, route: RouteSpec): void {
  if (route.subject === 'user') {
    cmd.argument('<user...>', 'accounts to query; - reads them from stdin, one per line');
  } else if (route.subject === 'list') {
    cmd.argument('<list>', 'list id');
  }
  if (route.subject !== 'none') {
    cmd.addOption(new Option('--how <kind>', 'how to read the identifier (passed through)').default('username').argParser(nonEmpty('--how')));
  }
  if (route.since) {
    cmd.option('--since <when>', 'only records since an ISO 8601 date-time or an age such as 90m, 24h, 7d');
    cmd.option('--since-last', 'send the start of the last complete run for this user as --since');
    cmd.option('--state <file>', 'where --since-last keeps its marks (default: beside the config)');
  }
  if (route.snapshot) {
    cmd.option('--snapshot', 'with --all, keep a complete export as a snapshot (see `sgq diff`, `sgq snapshots`)');
    cmd.option('--changes', 'with --snapshot, print only who was gained and lost since the previous snapshot');
    cmd.addOption(new Option('--snapshot-dir <dir>', 'where snapshots are kept (default: $XDG_DATA_HOME/sgq/snapshots)').argParser(nonEmpty('--snapshot-dir')));
  }
  if (route.paginated) {
    cmd.addOption(new Option('--page <n>', 'page to fetch (default 1)').argParser(positiveInt('--page')));
    cmd.option('--all', 'follow next_page until it is null, writing records as pages arrive');
    cmd.addOption(new Option('--max-pages <n>', 'with --all, at most this many pages per user').argParser(positiveInt('--max-pages')));
    cmd.addOption(new Option('--parallel <n>', 'with --all, pages of a user asked at once (default 1, or the parallel setting)').argParser(positiveInt('--parallel', 16)));
  }
  if (route.subject === 'user') {
    cmd.addOption(new Option('--concurrency <n>', 'users in flight at once (default 4)').argParser(positiveInt('--concurrency', 64)));
  }
  addOutputOptions(cmd, route.subject !== 'none');
  addLimitOptions(cmd);
  cmd.addHelpText('after', routeExamples(route));
}

function addOutputOptions(cmd: Command, summary: boolean): void {
  addShapeOptions(cmd);
  cmd.addOption(new Option('--raw', 'print each response body as received, one per line').conflicts(['output', 'fields', 'limit', 'jq']));
  cmd.addOption(new Option('--out <file>', 'write to FILE, replaced only when the run succeeds').argParser(nonEmpty('--out')));
  cmd.addOption(new Option('--wait-lock <duration>', 'wait up to this long (30s, 5m) for another run using the same --out or state file').argParser(waitDuration));
  if (summary) cmd.addOption(new Option('--summary <format>', 'with json, the run summary as one JSON object on stderr').choices(['text', 'json']));
}

/** The options that shape records, shared by every command that prints them and by `sgq fmt`. */
function addShapeOptions(cmd: Command): void {
  cmd.addOption(new Option('-o, --output <format>', `${FORMATS.join(', ')} (default: table on a terminal, else ndjson)`).choices(FORMATS));
  cmd.addOption(new Option('--fields <list>', 'comma-separated fields to print, in this order; user.username reaches into nested objects').argParser(fieldList));
  cmd.addOption(new Option('--no-header', 'csv and tsv: leave out the header line (to append to a file that has one)'));
  cmd.addOption(new Option('--no-pager', 'on a terminal, print directly instead of through the pager (SGQ_PAGER, PAGER, less -FRX)'));
  cmd.addOption(new Option('--jq <expr>', 'run a jq filter over each record: strings print raw, other results as compact JSON').conflicts(['output', 'fields']));
  cmd.addOption(new Option('--slurp', 'with --jq, run the filter once over the array of all records'));
  cmd.addOption(new Option('--arg <name> <value>', 'with --jq, $name is the string value').argParser(namedValue('--arg', false)));
  cmd.addOption(new Option('--argjson <name> <json>', 'with --jq, $name is the JSON value').argParser(namedValue('--argjson', true)));
}

function addLimitOptions(cmd: Command): void {
  cmd.addOption(new Option('--limit <n>', 'stop after exactly N records').argParser(positiveInt('--limit')));
  cmd.addOption(new Option('--max-credits <n>', 'stop before the credits spent would pass N').argParser(nonNegativeInt('--max-credits')));
  cmd.option('--dry-run', 'print the requests and the worst-case credits on stderr; send nothing');
  cmd.addOption(new Option('--cache <ttl>', 'reuse a successful answer kept less than TTL ago (30m, 1h, 7d): no request, no credit').argParser(cacheTtl));
  cmd.addOption(new Option('--max-wait <duration>', 'wait out a rate limit (429) asking for up to this long (5m, 1h), past the 60s sgq waits by itself').argParser(waitDuration));
  cmd.addOption(new Option('--trace <file>', 'write every exchange (headers, status, sizes, timings; key masked) to FILE as NDJSON').argParser(nonEmpty('--trace')));
}

function routeExamples(route: RouteSpec): string {
  const name = `sgq ${commandName(route)}`;
  const lines = ['', 'Examples:'];
  if (route.subject === 'none') {
    lines.push(`  $ ${name}`, `  $ ${name} -o json`);
  } else if (route.subject === 'list') {
    lines.push(`  $ ${name} 1234567890`);
  } else {
    lines.push(`  $ ${name} jack`, `  $ ${name} jack dorsey -o csv --fields query_user,username`, `  $ cat users.txt | ${name} - --concurrency 8`);
    if (route.paginated) lines.push(`  $ ${name} jack --all --out jack.ndjson`, `  $ ${name} jack --all --limit 1000 | jq -r .username`);
    if (route.since) lines.push(`  $ ${name} jack --since 24h`, `  $ ${name} jack --since 2024-04-07T00:00:00Z --all`);
  }
  return `${lines.join('\n')}\n`;
}
