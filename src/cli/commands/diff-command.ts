import { existsSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import type { FileHandle } from 'node:fs/promises';
import { resolveConfig } from '../../core/config.js';
import { ExitCode, SgqError, usageError, worstExitCode } from '../../core/errors.js';
import { JsonTooDeep } from '../../core/json.js';
import { parseSince } from '../../core/since.js';
import type { Keyed, KeyStats } from '../../core/churn/keyed.js';
import { diffSorted, type DiffCounts } from '../../core/churn/merge-diff.js';
import { NotARecord } from '../../core/churn/record-key.js';
import { snapshotRecords, sortedExport } from '../../core/churn/sources.js';
import type { OpenSnapshot, StoredSnapshot } from '../../core/churn/store.js';
import { createFormatter, terminalWidth, type Format } from '../output/formats.js';
import { Reporter } from '../output/reporter.js';
import { FileSink, StreamSink, checkOutFile, lockOut, type Sink } from '../output/sink.js';
import type { CommandContext } from '../program.js';
import { chooseFormat } from './execute.js';
import { Subjects } from './subjects.js';
import { openSnapshotStore } from '../churn/open-store.js';
import { changeRecords, countsText, leftOutText } from '../churn/churn-text.js';


export interface DiffFlags {
  key?: string;
  changed?: boolean;
  following?: boolean;
  how?: string;
  at?: string;
  snapshotDir?: string;
  output?: Format;
  fields?: string[];
  out?: string;
}

/** One side of a diff: its records in key order, and what to say about it. */
interface Side {
  records: AsyncIterable<Keyed[]>;
  stats: KeyStats;
  label: string;
  complete?: boolean;
  close: () => void | Promise<void>;
}

/** Two arguments that name files are a file diff; anything else names users. */
const looksLikeFile = (arg: string) => arg !== '-' && (existsSync(arg) || /[/\\]|\.(ndjson|jsonl|json|csv|gz)$/i.test(arg));

export async function runDiffCommand(ctx: CommandContext, args: string[], flags: DiffFlags): Promise<number> {
  const { io, globals } = ctx;
  // Sorting millions of lines makes garbage fast, and V8 answers by growing its young
  // generation up to 48 MiB, which showed as peak memory (a diff of two unsorted 5,000,000-line
  // exports: 242 MiB; npm run bench) and saved no time. Only the CLI's process sets it.
  await io.setV8Flags?.('--semi-space-growth-factor=1');
  const reporter = await Reporter.open(io, { quiet: globals.quiet, verbose: globals.verbose });
  const key = flags.key ?? 'username';
  const files = args.some(looksLikeFile);
  if (files) {
    if (args.length !== 2) throw usageError('sgq diff compares two files: OLD NEW', 'or name users to compare their last two snapshots');
    for (const file of args) if (!existsSync(file) || !statSync(file).isFile()) throw usageError(`cannot read ${file}: no such file`);
    if (flags.following || flags.at || flags.how || flags.snapshotDir) throw usageError('--following, --at, --how and --snapshot-dir choose snapshots; they do not apply to two files');
  }
  const at = flags.at === undefined ? undefined : atTime(flags.at, (io.now ?? (() => new Date()))());
  const users: string[] = [];
  if (!files) for await (const user of await Subjects.open(args, io, 2)) users.push(user);
  const config = resolveConfig(globals, io.env);
  const format = chooseFormat(flags, config, io.stdoutIsTTY);
  // --out as every command writes it: locked, through a temporary file, links and FIFOs respected.
  const out = flags.out === undefined ? undefined : checkOutFile(flags.out);
  const outLock = await lockOut(out, { waitMs: 0, signal: io.signal });
  const sink: Sink = out ? FileSink.open(out, () => undefined) : new StreamSink(io.stdout, () => undefined);
  const formatter = await createFormatter(format, sink, { fields: flags.fields, warn: (line) => reporter.warn(line), toFile: out !== undefined, width: terminalWidth(io) });
  const tag = users.length > 1;
  let exitCode: number = ExitCode.ok;

  const compare = async (older: Side, newer: Side, who: string | null) => {
    for (const side of [older, newer]) if (side.complete === false) reporter.warn(`${side.label} is not complete: "lost" there means "not seen"`);
    let counts: DiffCounts;
    try {
      counts = await diffSorted(older.records, newer.records, { changed: flags.changed === true }, async (batch) => {
        if (io.signal?.aborted) throw new SgqError(io.signal.reason === 'SIGTERM' ? ExitCode.terminated : ExitCode.interrupted, `interrupted by ${String(io.signal.reason)}`);
        const records = changeRecords(batch);
        formatter.write(tag && who !== null ? records.map((r) => ({ query_user: who, ...r })) : records, true);
        await sink.drain();
      });
    } catch (error) {
      if (error instanceof JsonTooDeep) throw usageError(`a record is ${error.message}`);
      throw error instanceof NotARecord || (error instanceof Error && /not in key order/.test(error.message)) ? usageError(error.message) : error;
    } finally {
      await Promise.all([older.close(), newer.close()]);
    }
    for (const side of [older, newer]) {
      const note = leftOutText(side.stats, key, side.label);
      if (note) reporter.warn(note);
    }
    reporter.info(`sgq: ${who === null ? '' : `${who}: `}${countsText(counts, flags.changed === true)} (${older.label} to ${newer.label})`);
  };

  let ok = false;
  try {
    if (files) {
      await compare(await fileSide(args[0]!, key), await fileSide(args[1]!, key), null);
    } else {
      const store = openSnapshotStore(flags.snapshotDir, config, io.env);
      const route = flags.following ? 'graph/get_following' : 'graph/get_followers';
      for (const user of users) {
        const subject = { profile: config.profile, route, how: flags.how ?? 'username', user };
        const pair = await store.openFrom(subject, (history) => lastTwo(history, at));
        if (pair.length < 2) {
          for (const s of pair) await s.handle.close();
          reporter.error(
            `${user}: ${pair.length ? 'only one snapshot' : 'no snapshots'} of its ${flags.following ? 'following' : 'followers'}${at ? ` up to ${flags.at}` : ''} in ${store.root} (profile ${config.profile})`,
            `take one with \`sgq graph ${flags.following ? 'following' : 'followers'} ${user} --all --snapshot\``,
          );
          exitCode = worstExitCode([exitCode, ExitCode.usage]);
          continue;
        }
        await compare(await snapshotSide(pair[0]!, key), await snapshotSide(pair[1]!, key), user);
      }
    }
    ok = true;
  } finally {
    if (!sink.closed) formatter.end();
    const note = await sink.finish(ok && exitCode === ExitCode.ok);
    outLock?.release();
    if (note) reporter.error(note);
  }
  if (sink.failure) throw sink.failure;
  return sink.closed ? ExitCode.ok : exitCode;
}

/** `--at`: an ISO date-time or an age; a date alone means the end of that day (UTC). */
function atTime(text: string, now: Date): string {
  let at: string;
  try {
    at = new Date(Date.parse(parseSince(text, now))).toISOString();
  } catch {
    throw usageError(`invalid --at ${JSON.stringify(text)}`, 'use an ISO 8601 date or date-time (2026-11-20, 2026-11-20T03:00:00Z) or an age such as 7d');
  }
  return /^\d{4}-\d{2}-\d{2}$/.test(text.trim()) ? new Date(Date.parse(at) + 86_400_000 - 1).toISOString() : at;
}

/** The last two snapshots, or the last two taken at or before `at`. */
function lastTwo(history: StoredSnapshot[], at: string | undefined): StoredSnapshot[] {
  const candidates = at === undefined ? history : history.filter((s) => s.meta.taken_at <= at);
  return candidates.slice(-2);
}

async function snapshotSide(snapshot: OpenSnapshot, key: string): Promise<Side> {
  const label = `snapshot of ${snapshot.meta.taken_at}`;
  const close = () => snapshot.handle.close();
  if (key === snapshot.meta.sorted_by) {
    const stats: KeyStats = { missingKey: 0, duplicates: 0 };
    return { records: snapshotRecords(snapshot.handle, key, stats, snapshot.dataPath), stats, label, complete: snapshot.meta.complete, close };
  }
  const side = await sorted(snapshot.handle, key);
  return { ...side, label, complete: snapshot.meta.complete, close: async () => (side.close(), await close()) };
}

async function fileSide(file: string, key: string): Promise<Side> {
  return { ...(await sorted(file, key)), label: file };
}

/** Another key than the snapshots' own, or a file: sorted on disk in the temporary folder (TMPDIR). */
async function sorted(source: string | FileHandle, key: string): Promise<Pick<Side, 'records' | 'stats' | 'close'>> {
  try {
    const { records, stats, discard } = await sortedExport(source, key, tmpdir(), String(process.pid));
    return { records, stats, close: discard };
  } catch (error) {
    if (error instanceof NotARecord) throw usageError(`${typeof source === 'string' ? source : 'snapshot'}: ${error.message}`, 'sgq diff reads NDJSON, JSON or CSV exports (gzip too)');
    throw error;
  }
}
