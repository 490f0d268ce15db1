import { usageError } from '../../../core/errors.js';
import type { Format } from '../../../core/format-names.js';
import type { CommandContext } from '../../program/context.js';
import { commandName, routeFolderName, type RouteSpec } from '../../../core/routes.js';
import { routeRequest } from '../../../core/request-body.js';
import { parseSince } from '../../../core/since.js';
import { execute, type OutputFlags } from '../../run/execute.js';
import { Subjects } from '../../input/subjects.js';
import { shellQuote } from './shell-quote.js';
import { marksFile, markKey, type SinceMarks } from '../../run/since-marks.js';
import type { Held } from '../../run/plan.js';
import type { ResumeSubjects } from '../../run/remaining.js';
import type { Continuation, Job } from '../../run/jobs.js';
import { sinceOfNight, type Night } from '../../run/since-night.js';
import type { SnapshotFlags } from '../../snapshots/snapshot-jobs.js';

export interface RouteFlags extends OutputFlags, SnapshotFlags {
  how?: string;
  since?: string;
  sinceLast?: boolean;
  state?: string;
  page?: number;
  all?: boolean;
  maxPages?: number;
  concurrency?: number;
  parallel?: number;
  dataset?: string;
}

/** One generic action serves every route of the table. */
export async function runRouteCommand(ctx: CommandContext, route: RouteSpec, args: string[], flags: RouteFlags): Promise<number> {
  const { io, globals } = ctx;
  const startedAt = (io.now ?? (() => new Date()))();
  // Flags first: a usage error should not wait for a whole stdin list to be read.
  if (flags.since !== undefined && flags.sinceLast) throw usageError('use either --since or --since-last, not both');
  // A flag that would change nothing is a mistake to point out, not to ignore.
  if (flags.maxPages !== undefined && !flags.all) throw usageError('--max-pages only applies with --all', 'add --all, or use --page N for one page');
  if (flags.parallel !== undefined && !flags.all) throw usageError('--parallel only applies with --all', 'add --all: one page needs no parallel calls');
  if (flags.state !== undefined && !flags.sinceLast) throw usageError('--state only applies with --since-last', 'add --since-last, or drop --state');
  // Loaded only by the runs that keep snapshots.
  if (flags.snapshot || flags.changes || flags.snapshotDir || flags.key || flags.notify !== undefined || flags.confirmLost !== undefined || flags.fullEvery !== undefined || flags.full) (await import('../../snapshots/snapshot-jobs.js')).checkSnapshotFlags(flags);
  const since = flags.since === undefined ? undefined : parseSince(flags.since, startedAt);
  const how = flags.how ?? 'username';
  const wanted = flags.concurrency ?? 4;
  // Read ahead only as many users as can be in flight; the rest are read as the run needs them.
  const subjects = route.subject === 'none' ? undefined : await Subjects.open(args, io, Math.max(2, wanted));
  // A list on stdin is tagged whatever its length, so its records have one shape.
  const tagUser = subjects !== undefined && (subjects.first.length > 1 || subjects.fromStdin);
  /** The `since` each user was asked with, frozen for its resume. */
  let sinceOf: (user: string | null) => string | undefined = () => since;

  const code = await execute(
    ctx,
    {
      label: commandName(route),
      path: route.path,
      needsKey: route.needsKey,
      concurrency: Math.min(wanted, subjects?.first.length ?? 1),
      parallel: flags.parallel,
      manyCalls: subjects?.fromStdin,
      tagUser,
      users: subjects ? subjects.count : 1,
      startedAt,
      marksFile: flags.sinceLast ? (config) => marksFile(flags.state, io.env, config.store?.path) : undefined,
      snapshots: flags.snapshot ? { dir: flags.snapshotDir, notify: flags.notify, confirmLost: flags.confirmLost, fullEvery: flags.fullEvery, full: flags.full === true, key: flags.key } : undefined,
      dataset: { dir: flags.dataset, route: routeFolderName(route.path) },
      jobs: (config, held) => {
        const keyOf = (user: string | null) => (user === null ? '' : markKey(config.profile, route.path, how, user));
        const { marks } = held;
        if (marks) sinceOf = (user) => marks.sinceFor(keyOf(user), startedAt).since;
        const job = (user: string | null): Job => {
          // A user's mark key, worked out once for reading its mark and for staging the new one.
          const key = marks && user !== null ? keyOf(user) : undefined;
          const userSince = key === undefined ? sinceOf(user) : sinceFromMark(marks!, key, user!, startedAt, held);
          const range = { startPage: flags.page ?? 1, follow: flags.all === true, maxPages: flags.maxPages };
          // --full-every: a night between whole ones asks with the since of the user's last run.
          const withSince = (since: string) => routeRequest(route, { user, how, since }, range);
          const subject = user === null ? undefined : { profile: config.profile, route: route.path, how, user };
          const snapshot = held.snapshots && subject ? held.snapshots.hooks(subject, startedAt, flags.changes === true, flags.key, withSince) : {};
          // What the user's list is tonight, seen by the dataset too (a night of what came since marks its records).
          let tonight: Night | undefined;
          const planned = snapshot.night ?? (!held.snapshots && held.nights && subject ? () => held.nights!.tonight(subject, withSince) : undefined);
          const night = planned ? { night: () => (tonight = planned()) } : {};
          return {
            user,
            request: routeRequest(route, { user, how, since: userSince }, range),
            onComplete: marks && key !== undefined ? (asOf) => marks.stage(key, asOf) : undefined,
            ...snapshot,
            ...night,
            // The dataset sees every record and every change, whatever the output shows.
            ...(held.dataset ? held.dataset.hooks(user, snapshot, () => sinceOfNight(tonight)) : {}),
          };
        };
        return subjects ? subjects.map(job) : [job(null)];
      },
      resume: (who, from) => resumeCommand({ route, flags, globals, tagUser, sinceOf }, who, from),
    },
    flags,
  );
  // The resume lists the users read; those stdin still held when the stop came were never seen.
  if (subjects?.cutShort) (await ctx.reporter()).warn('the run stopped while stdin was still being read: users after the last one read were never seen, and the resume does not list them; give them again');
  return code;
}

/** The since a user's --since-last mark gives; a mark from the future is not sent, and the run says so. */
function sinceFromMark(marks: SinceMarks, key: string, user: string, startedAt: Date, held: Held): string | undefined {
  const { since, future } = marks.sinceFor(key, startedAt);
  if (future !== undefined) {
    held.reporter.warn(`${user}: the --since-last mark ${future} is later than this run's start (${startedAt.toISOString()}): the clock was ahead when it was written, so no since is sent and every record is fetched`);
  }
  return since;
}

interface ResumeBase {
  route: RouteSpec;
  flags: RouteFlags;
  globals: CommandContext['globals'];
  tagUser: boolean;
  sinceOf: (user: string | null) => string | undefined;
}

/**
 * The command that runs the rest of a run: for one user stopped part-way, from its next page;
 * for users not finished, as the run would have. `--since` is frozen to the instant the run
 * used, the budget is what is left of it, and the output appends validly to what was written.
 */
function resumeCommand({ route, flags, globals, tagUser, sinceOf }: ResumeBase, who: ResumeSubjects, from: Continuation): string {
  const words = ['sgq'];
  if (globals.sandbox) words.push('--sandbox');
  if (globals.profile) words.push('--profile', globals.profile);
  if (globals.baseUrl) words.push('--base-url', globals.baseUrl);
  words.push(...commandName(route).split(' '));
  const one = 'users' in who && who.users.length === 1 ? who.users[0]! : undefined;
  // One user of a tagged run is read from stdin, so its records keep their query_user.
  const piped = typeof one === 'string' && tagUser;
  const users = 'file' in who || piped ? ['-'] : who.users.filter((u): u is string => u !== null);
  const input = 'file' in who ? ` < ${shellQuote(who.file)}` : '';
  // Users go first, as people write them, unless one looks like a flag: then last, after `--`.
  const dashed = users.some((u) => u.startsWith('-') && u !== '-');
  if (!dashed) words.push(...users);
  if (flags.how && flags.how !== 'username') words.push('--how', flags.how);
  if (flags.sinceLast && one === undefined) {
    words.push('--since-last');
    if (flags.state) words.push('--state', flags.state);
  } else {
    const since = sinceOf(one ?? null);
    if (since) words.push('--since', since);
  }
  // A snapshot is a whole list: a user stopped part-way starts again from its first page.
  if (from.page !== undefined && !flags.snapshot) {
    words.push('--page', String(from.page), '--all');
    if (flags.maxPages !== undefined) words.push('--max-pages', String(Math.max(1, flags.maxPages - (from.pagesDone ?? 0))));
  } else {
    if (flags.page !== undefined) words.push('--page', String(flags.page));
    if (flags.all) words.push('--all');
    if (flags.maxPages !== undefined) words.push('--max-pages', String(flags.maxPages));
  }
  if (flags.concurrency !== undefined && one === undefined) words.push('--concurrency', String(flags.concurrency));
  if (flags.parallel !== undefined) words.push('--parallel', String(flags.parallel));
  if (from.limit !== undefined) words.push('--limit', String(from.limit));
  if (from.maxCredits !== undefined) words.push('--max-credits', String(from.maxCredits));
  if (flags.raw) words.push('--raw');
  words.push(...keptFlags(flags));
  // Into `>> FILE` the rest would take the default format: say the one the run wrote.
  const ownFile = OWN_FILE_FORMATS.includes(from.format);
  if (flags.output || flags.out !== undefined || from.format === 'csv' || ownFile) words.push('-o', from.format);
  const delimited = from.format === 'csv' || from.format === 'tsv';
  const fields = delimited && from.columns ? from.columns : flags.fields;
  if (fields) words.push('--fields', fields.join(','));
  if (delimited && (from.headerWritten || flags.header === false)) words.push('--no-header');
  // A JSON array, a YAML list or a Parquet file cannot be appended to: the rest goes to a file of its own.
  if (ownFile) words.push('--out', nextFile(flags.out, from.format));
  if (flags.summary) words.push('--summary', flags.summary);
  if (globals.timeout !== undefined) words.push('--timeout', String(globals.timeout));
  if (globals.retries !== undefined) words.push('--retries', String(globals.retries));
  if (dashed) words.push('--', ...users);
  let command = words.map(shellQuote).join(' ') + input;
  if (piped) command = `printf '%s\\n' ${shellQuote(one)} | ${command}`;
  // ndjson and csv append to what the run wrote: FILE once in place, else FILE.partial.
  if (flags.out && !ownFile) command += ` >> ${shellQuote(from.outputComplete ? flags.out : `${flags.out}.partial`)}`;
  return command;
}

/** What the run kept beside its output, kept by its resume too: the snapshots, their changes and how losses are counted, the dataset. */
function keptFlags(flags: RouteFlags): string[] {
  const words: string[] = [];
  if (flags.snapshot) words.push('--snapshot');
  if (flags.changes) words.push('--changes');
  if (flags.snapshotDir !== undefined) words.push('--snapshot-dir', flags.snapshotDir);
  if (flags.key !== undefined) words.push('--key', flags.key);
  if (flags.confirmLost !== undefined) words.push('--confirm-lost', String(flags.confirmLost));
  // Not --notify's URL (a secret, printed here on stderr): the notify setting reaches the resume as any run.
  if (flags.fullEvery !== undefined) words.push('--full-every', String(flags.fullEvery));
  if (flags.full) words.push('--full');
  if (flags.dataset !== undefined) words.push('--dataset', flags.dataset);
  return words;
}

/** The formats whose rest is written to a file of its own rather than appended. */
const OWN_FILE_FORMATS: readonly Format[] = ['json', 'yaml', 'parquet'];

/** A new name beside an --out file: jack.json → jack.2.json, jack.2.json → jack.3.json, none → rest.json. */
function nextFile(out: string | undefined, format: Format): string {
  if (!out) return `rest.${format}`;
  const m = /^(.*?)(?:\.(\d+))?(\.[A-Za-z0-9]+)?$/.exec(out)!;
  return `${m[1]}.${Number(m[2] ?? 1) + 1}${m[3] ?? ''}`;
}
