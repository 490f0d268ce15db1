import { existsSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { ExitCode, interruptedBy, usageError, worstExitCode } from '../../../core/errors.js';
import { JsonTooDeep } from '../../../core/json.js';
import { LineTooLong, NotARecord, diff, type Change, type DiffCounts, type DiffSource, type Matched } from '../../../core/diff/diff.js';
import { diffSide, unreadable, type OpenSnapshot, type SnapshotStore, type StoredSnapshot } from '../../../core/snapshots/snapshots.js';
import type { Format, Formatter } from '../../formats/formats.js';
import { claimOutput, openOutput, outLockOptions } from '../../output/pipeline.js';
import { Reporter } from '../../stderr/reporter.js';
import type { Sink } from '../../output/sink.js';
import type { CommandContext } from '../../program/context.js';
import { chooseFormat } from '../../run/execute.js';
import { Subjects } from '../../input/subjects.js';
import { sweepLeftovers } from '../../../fs/sweep.js';
import { openSnapshotStore } from '../../snapshots/open-store.js';
import { stateOwner } from '../../run/connection.js';
import { instantOf } from '../../snapshots/instants.js';
import { changeLines, changeRecords, countsText, leftOutText } from '../../snapshots/churn-text.js';

export interface DiffFlags {
  key?: string;
  changed?: boolean;
  following?: boolean;
  how?: string;
  at?: string;
  snapshotDir?: string;
  output?: Format;
  fields?: string[];
  wide?: boolean;
  bigintAsString?: boolean;
  out?: string;
  waitLock?: { ms: number; text: string };
}

/** One side of a diff: where its records are, and what to say about it. */
interface Side {
  source: DiffSource;
  label: string;
  complete?: boolean;
}

/** Two arguments that name files are a file diff; anything else names users. */
const looksLikeFile = (arg: string) => arg !== '-' && (existsSync(arg) || /[/\\]|\.(ndjson|jsonl|json|csv|gz)$/i.test(arg));

/** Where the changes go, and what the run must end. */
interface Output {
  sink: Sink;
  formatter: Formatter;
  reporter: Reporter;
  /** NDJSON without --fields or --bigint-as-string: the changes go to the sink as lines (changeLines), as its formatter would write them. */
  lines: boolean;
  /** Ctrl-C or SIGTERM: checked between chunks and batches, so a diff of any size stops within one. */
  signal?: AbortSignal;
  /** Where the diff spills what it sorts and partitions (TMPDIR). */
  spillDir: string;
}

export async function runDiffCommand(ctx: CommandContext, args: string[], flags: DiffFlags): Promise<number> {
  const { io, globals } = ctx;
  // Sorting millions of lines makes garbage fast, and V8 answers by growing its young
  // generation up to 48 MiB, which showed as peak memory (a diff of two unsorted 5,000,000-line
  // exports: 242 MiB; npm run bench) and saved no time. Only the CLI's process sets it.
  await io.setV8Flags?.('--semi-space-growth-factor=1');
  const reporter = await Reporter.open(io, { quiet: globals.quiet, verbose: globals.verbose });
  const files = args.some(looksLikeFile);
  if (files) checkFileArguments(args, flags);
  const at = flags.at === undefined ? undefined : instantOf(flags.at, (io.now ?? (() => new Date()))(), '--at', { endOfDay: true });
  const users: string[] = [];
  if (!files) for await (const user of await Subjects.open(args, io, 2)) users.push(user);
  if (io.signal?.aborted) throw interruptedBy(io.signal.reason);
  const { config } = ctx;
  const format = chooseFormat(flags, config, io.stdoutIsTTY, (line) => reporter.warn(line));
  // --out as every command writes it: checked, locked, through a temporary file, links and FIFOs respected.
  const claimed = await claimOutput(flags.out, outLockOptions(flags.waitLock, io.signal, reporter));
  const bigintAsString = flags.bigintAsString ?? config.bigintAsString === 'true';
  // A reader that goes away (`| head`) or a destination that fails stops the diff at its next
  // batch, as a closed pipe stops an export's fetching: what is left would be read for nothing.
  const gone = new AbortController();
  const signal = io.signal ? AbortSignal.any([io.signal, gone.signal]) : gone.signal;
  const { sink, formatter } = await openOutput(io, claimed.target, { format, fields: flags.fields, wide: flags.wide, bigintAsString, pager: false }, reporter, () => gone.abort(new Error('the output closed'))).catch((error: unknown) => {
    claimed.release();
    throw error;
  });
  // A diff killed before it removed its spill (kill -9, out of memory) left it in the temp
  // folder, which no lock guards: this host's spill of runs that are gone goes before this one spills.
  const spillDir = tmpdir();
  sweepLeftovers(spillDir, undefined, { ownHostOnly: true });
  let exitCode: number = ExitCode.ok;
  let ok = false;
  try {
    const output: Output = { sink, formatter, reporter, lines: format === 'ndjson' && !flags.fields && !bigintAsString, signal, spillDir };
    if (files) {
      await compare(output, fileSide(args[0]!), fileSide(args[1]!), null, flags);
    } else {
      const pairs = { store: openSnapshotStore(flags.snapshotDir, config, io.env, await stateOwner(ctx)), profile: config.profile, at, tag: users.length > 1 };
      for (const user of users) exitCode = worstExitCode([exitCode, await diffUser(output, pairs, user, flags)]);
    }
    ok = true;
  } catch (error) {
    if (io.signal?.aborted) throw interruptedBy(io.signal.reason);
    // Stopped by a reader that went away: exit 0, quietly (a failed destination's error follows).
    if (!sink.closed) throw error;
  } finally {
    if (!sink.closed) await formatter.end();
    const note = await sink.finish(ok && exitCode === ExitCode.ok);
    claimed.release();
    if (note) reporter.error(note);
  }
  if (sink.failure) throw sink.failure;
  return sink.closed ? ExitCode.ok : exitCode;
}

function checkFileArguments(args: string[], flags: DiffFlags): void {
  if (args.length !== 2) throw usageError('sgq diff compares two files: OLD NEW', 'or name users to compare their last two snapshots');
  for (const file of args) if (!existsSync(file) || !statSync(file).isFile()) throw usageError(`cannot read ${file}: no such file`);
  if (flags.following || flags.at || flags.how || flags.snapshotDir) throw usageError('--following, --at, --how and --snapshot-dir choose snapshots; they do not apply to two files');
}

/** Writes the changes from `older` to `newer`, tagged with the user when there are several. */
async function compare(output: Output, older: Side, newer: Side, who: string | null, flags: DiffFlags & { tag?: boolean }): Promise<void> {
  const { sink, formatter, reporter, signal } = output;
  for (const side of [older, newer]) if (side.complete === false) reporter.warn(`${side.label} is not complete: "lost" there means "not seen"`);
  const changed = flags.changed === true;
  const prefix = who === null ? '' : `${who}: `;
  let counts: DiffCounts;
  let matched: Matched;
  let renames = false;
  const onMatch = (found: Matched) => {
    if (found.match.note) reporter.warn(`${prefix}${found.match.note}`);
    renames = found.match.by === 'id';
  };
  const emit = async (batch: Change[]) => {
    const tagged = flags.tag && who !== null;
    if (output.lines && !tagged) {
      if (batch.length) sink.write(changeLines(batch, renames));
    } else {
      const records = changeRecords(batch, renames);
      await formatter.write(tagged ? records.map((r) => ({ query_user: who, ...r })) : records, true);
    }
    await sink.drain();
  };
  try {
    ({ counts, matched } = await diff(older.source, newer.source, { key: flags.key, tempDir: output.spillDir, changed, signal, thread: true, onMatch, emit }));
  } catch (error) {
    throw readError(error);
  }
  const { match } = matched;
  const sides = [[older, match.older, matched.older.stats], [newer, match.newer, matched.newer.stats]] as const;
  for (const [side, field, stats] of sides) {
    const note = leftOutText(stats, field, side.label);
    if (note) reporter.warn(note);
  }
  reporter.info(`sgq: ${prefix}${countsText(counts, { changed, renames: match.by === 'id' })} (${older.label} to ${newer.label})`);
}

/** A record that cannot be read, or a stored snapshot out of order: a usage error naming the side. */
function readError(error: unknown): unknown {
  if (error instanceof JsonTooDeep) return usageError(`a record is ${error.message}`);
  if (error instanceof NotARecord) return usageError(error.message, 'sgq diff reads NDJSON, JSON or CSV exports (gzip too)');
  if (error instanceof LineTooLong) return usageError(error.message, 'sgq diff reads exports of records, one a line');
  return error instanceof Error && /not in key order/.test(error.message) ? usageError(error.message) : error;
}

/** The diff of a user's last two snapshots (up to --at); exit 2 when there are fewer. */
async function diffUser(
  output: Output,
  pairs: { store: SnapshotStore; profile: string; at: string | undefined; tag: boolean },
  user: string,
  flags: DiffFlags,
): Promise<number> {
  const { store, profile, at, tag } = pairs;
  const route = flags.following ? 'graph/get_following' : 'graph/get_followers';
  let partials = false;
  const pair = await store.openFrom({ profile, route, how: flags.how ?? 'username', user }, (history) => {
    partials = history.some((s) => s.meta.partial);
    return lastTwo(history, at);
  });
  if (pair.length < 2) {
    for (const s of pair) await s.handle.close();
    output.reporter.error(
      `${user}: ${pair.length ? 'only one' : 'no'} ${partials ? 'whole ' : ''}snapshot${pair.length ? '' : 's'} of its ${flags.following ? 'following' : 'followers'}${at ? ` up to ${flags.at}` : ''} in ${store.root} (profile ${profile})`,
      `take one with \`sgq graph ${flags.following ? 'following' : 'followers'} ${user} --all --snapshot\``,
    );
    return ExitCode.usage;
  }
  const [older, newer] = pair as [OpenSnapshot, OpenSnapshot];
  if (unreadable(older.meta) && newer.meta.records > 0) {
    output.reporter.warn(`${user}: the snapshot of ${older.meta.taken_at}, taken by sgq before 2.3, holds no records (it could not read records without \`username\`): every account shows as gained`);
  }
  try {
    await compare(output, snapshotSide(pair[0]!), snapshotSide(pair[1]!), user, { ...flags, tag });
  } finally {
    await Promise.all(pair.map((s) => s.handle.close()));
  }
  return ExitCode.ok;
}

/** The last two whole snapshots (--full-every's partial ones left out), or the last two taken at or before `at`. */
function lastTwo(history: StoredSnapshot[], at: string | undefined): StoredSnapshot[] {
  const whole = history.filter((s) => !s.meta.partial);
  const candidates = at === undefined ? whole : whole.filter((s) => s.meta.taken_at <= at);
  return candidates.slice(-2);
}

function snapshotSide(snapshot: OpenSnapshot): Side {
  const label = `snapshot of ${snapshot.meta.taken_at}`;
  return { source: diffSide(snapshot, label), label, complete: snapshot.meta.complete };
}

/** An export: joined by hash, spilling partitions to the temporary folder (TMPDIR) when it is large. */
function fileSide(file: string): Side {
  return { source: { kind: 'export', source: file, where: file }, label: file };
}
