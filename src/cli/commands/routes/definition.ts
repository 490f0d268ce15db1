import { Option } from 'commander';
import { NAMESPACES, ROUTES, namespaceSummary, type RouteSpec } from '../../../core/routes.js';
import type { RouteFlags } from './runner.js';
import { defineCommand, helpText, type ArgumentDefinition, type CommandDefinition } from '../../program/define.js';
import { datasetOption, limitOptions, outputOptions, snapshotDirOption } from '../../program/options.js';
import { nonEmpty, positiveInt } from '../../program/parsers.js';
import { MAX_CONFIRM_LOST, MAX_FULL_EVERY } from '../../../core/config.js';
import { examplesOf } from './examples.js';

// The route commands, one per route of the table: a namespace lists its verbs, and a verb's
// many options are built only when that verb is run or a help lists it, so a route command
// builds only its own verb's options at start-up.

/** The namespaces with their verbs, and the routes outside any namespace (`info`). */
export function routeCommands(): CommandDefinition[] {
  return [...NAMESPACES.map(namespaceCommand), ...ROUTES.filter((r) => !r.namespace).map(routeCommand)];
}

function namespaceCommand(ns: (typeof NAMESPACES)[number]): CommandDefinition {
  const verbs = ROUTES.filter((r) => r.namespace === ns);
  return {
    name: ns,
    summary: namespaceSummary[ns],
    subcommands: () => verbs.map(routeCommand),
    help: helpText({ examples: [...verbs.map((r) => examplesOf(r)[0]!), `sgq ${ns} ${verbs[0]!.verb} --help`] }),
  };
}

function routeCommand(route: RouteSpec): CommandDefinition {
  return defineCommand<RouteFlags>({
    name: route.verb,
    summary: route.summary,
    arguments: routeArguments(route),
    options: () => routeOptions(route),
    help: routeExamples(route),
    async handler(args, opts, ctx) {
      const { runRouteCommand } = await import('./runner.js');
      return runRouteCommand(ctx, route, args, opts);
    },
  });
}

function routeArguments(route: RouteSpec): ArgumentDefinition[] {
  if (route.subject === 'user') return [{ name: '<user...>', description: 'accounts to query; - reads them from stdin, one per line' }];
  if (route.subject === 'list') return [{ name: '<list>', description: 'list id' }];
  return [];
}

function routeOptions(route: RouteSpec): Option[] {
  const options: Option[] = [];
  if (route.subject !== 'none') {
    options.push(new Option('--how <kind>', 'how to read the identifier (passed through)').default('username').argParser(nonEmpty('--how')));
  }
  if (route.since) {
    options.push(
      new Option('--since <when>', 'only records since an ISO 8601 date-time or an age such as 90m, 24h, 7d'),
      new Option('--since-last', 'send the start of the last complete run for this user as --since'),
      new Option('--state <file>', 'where --since-last keeps its marks (default: beside the config)'),
    );
  }
  if (route.snapshot) {
    options.push(
      new Option('--snapshot', 'with --all, keep a complete export as a snapshot (see `sgq diff`, `sgq snapshots`)'),
      new Option('--changes', 'with --snapshot, print only who was gained and lost since the previous snapshot'),
      new Option('--key <field>', 'with --snapshot, the field that identifies an account (default: its id, else its username)').argParser(nonEmpty('--key')),
      new Option('--confirm-lost <n>', 'with --snapshot, an account is lost once missing from N snapshots in a row (default 1, or the confirm-lost setting)').argParser(positiveInt('--confirm-lost', MAX_CONFIRM_LOST)),
      new Option('--full-every <n>', "with --snapshot, fetch a user's whole list every N runs, and between them only what came since (default 1, or the full-every setting)").argParser(positiveInt('--full-every', MAX_FULL_EVERY)),
      new Option('--full', 'with --snapshot, fetch every whole list tonight, whatever --full-every counts'),
      // Checked by the run (checkSnapshotFlags), not by Commander, whose message would repeat the address.
      new Option('--notify <url>', 'with --snapshot, POST the changes found to this webhook (Slack, Discord, …); shows in ps: prefer the notify setting'),
      snapshotDirOption(),
    );
  }
  if (route.paginated) {
    options.push(
      new Option('--page <n>', 'page to fetch (default 1)').argParser(positiveInt('--page')),
      new Option('--all', 'follow next_page until it is null, writing records as pages arrive'),
      new Option('--max-pages <n>', 'with --all, at most this many pages per user').argParser(positiveInt('--max-pages')),
      new Option('--parallel <n>', 'with --all, pages of a user asked at once (default 1, or the parallel setting)').argParser(positiveInt('--parallel', 16)),
    );
  }
  if (route.subject === 'user') {
    options.push(new Option('--concurrency <n>', 'users in flight at once (default 4)').argParser(positiveInt('--concurrency', 64)));
  }
  return [...options, ...outputOptions(route.subject !== 'none'), datasetOption(), ...limitOptions()];
}

/** The route's own examples (examples.ts), as every help shows them. */
const routeExamples = (route: RouteSpec): string => helpText({ examples: examplesOf(route) });
