import type { Json } from '../json.js';
import { usageError } from '../errors.js';
import type { CommandContext } from '../program.js';
import { commandName, type RouteSpec } from '../routes.js';
import { parseSince } from '../since.js';
import { execute, type OutputFlags } from './execute.js';
import { readSubjects } from './subjects.js';
import { shellQuote } from './shell.js';
import { SinceMarks, markKey } from '../run/since-marks.js';

export interface RouteFlags extends OutputFlags {
  how?: string;
  since?: string;
  sinceLast?: boolean;
  state?: string;
  page?: number;
  all?: boolean;
  maxPages?: number;
  concurrency?: number;
}

/** One generic action serves every route of the table. */
export async function runRouteCommand(ctx: CommandContext, route: RouteSpec, args: string[], flags: RouteFlags): Promise<number> {
  const { io, globals } = ctx;
  const startedAt = (io.now ?? (() => new Date()))();
  // Flags first: a usage error should not wait for a whole stdin list to be read.
  if (flags.since !== undefined && flags.sinceLast) throw usageError('use either --since or --since-last, not both');
  // A flag that would change nothing is a mistake to point out, not to ignore.
  if (flags.maxPages !== undefined && !flags.all) throw usageError('--max-pages only applies with --all', 'add --all, or use --page N for one page');
  if (flags.state !== undefined && !flags.sinceLast) throw usageError('--state only applies with --since-last', 'add --since-last, or drop --state');
  const since = flags.since === undefined ? undefined : parseSince(flags.since, startedAt);
  const subjects: (string | null)[] = route.subject === 'none' ? [null] : await readSubjects(args, io.stdin, io.stdinIsTTY);
  const how = flags.how ?? 'username';

  return execute(
    ctx,
    {
      label: commandName(route),
      needsKey: route.needsKey,
      knownCost: route.cost,
      concurrency: flags.concurrency ?? 4,
      tagUser: subjects.length > 1,
      jobs: (config) => {
        const marks = flags.sinceLast ? SinceMarks.open(flags.state, io.env, config.store?.path) : undefined;
        return subjects.map((user) => {
          const key = user === null ? '' : markKey(config.profile, route.path, how, user);
          const userSince = marks ? marks.get(key) : since;
          const payload = (page: number | null): Record<string, Json> => {
            if (user === null) return {};
            const body: Record<string, Json> = { user, how };
            if (page !== null) body.page = page;
            if (userSince !== undefined) body.since = userSince;
            return body;
          };
          return {
            user,
            request: {
              path: route.path,
              payload,
              sendKey: route.needsKey,
              paginated: route.paginated,
              startPage: flags.page ?? 1,
              follow: flags.all === true,
              maxPages: flags.maxPages,
              wholeBodyIsRecord: route.subject === 'none',
            },
            resumeCommand: (page: number) =>
              resumeCommand(route, user, { ...flags, since: userSince, sinceLast: false }, globals, page),
            onComplete: marks && user !== null ? () => marks.set(key, startedAt) : undefined,
          };
        });
      },
    },
    flags,
  );
}

/** The command that fetches the rest of a failed `--all` run, with `--since` frozen to an absolute time. */
function resumeCommand(route: RouteSpec, user: string | null, flags: RouteFlags, globals: CommandContext['globals'], page: number): string {
  const words = ['sgq'];
  if (globals.sandbox) words.push('--sandbox');
  if (globals.profile) words.push('--profile', globals.profile);
  if (globals.baseUrl) words.push('--base-url', globals.baseUrl);
  words.push(...commandName(route).split(' '));
  if (user !== null) words.push(user);
  if (flags.how && flags.how !== 'username') words.push('--how', flags.how);
  if (flags.since) words.push('--since', flags.since);
  words.push('--page', String(page), '--all');
  if (flags.output) words.push('-o', flags.output);
  if (flags.fields) words.push('--fields', flags.fields.join(','));
  return words.map(shellQuote).join(' ');
}
