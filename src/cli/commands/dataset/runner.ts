import { existsSync } from 'node:fs';
import { ExitCode, SgqError, usageError } from '../../../core/errors.js';
import type { CommandContext } from '../../program/context.js';
import type { Format } from '../../formats/formats.js';
import { compactDataset, type Merged } from '../../../core/dataset/compact.js';
import { fileRows, partitionRows, schemaRows } from '../../../core/dataset/info.js';
import { DatasetLayout } from '../../../core/dataset/layout.js';
import { SERVICE_FILE, holdsFiles, recordedService } from '../../../core/dataset/service-claim.js';
import { serviceName } from '../../../core/service.js';
import { outLockOptions } from '../../output/pipeline.js';
import type { Reporter } from '../../stderr/reporter.js';
import { count, grouped } from '../../../core/words.js';
import { fileError } from '../../../fs/file-errors.js';

export interface DatasetFlags {
  before?: string;
  waitLock?: { ms: number; text: string };
  output?: Format;
  fields?: string[];
  /** info: one row per column of each route, or one per file, instead of one per partition. */
  schema?: boolean;
  files?: boolean;
}

/** `sgq dataset info|compact DIR`. */
export async function runDatasetCommand(ctx: CommandContext, verb: 'info' | 'compact', dir: string, flags: DatasetFlags): Promise<number> {
  const reporter = await ctx.reporter();
  const layout = new DatasetLayout(dir);
  if (!existsSync(layout.root)) throw new SgqError(ExitCode.usage, `no dataset at ${layout.root}`, 'give the folder a run wrote with --dataset');
  return verb === 'compact' ? compact(ctx, layout, flags, reporter) : info(ctx, layout, flags, reporter);
}

async function compact(ctx: CommandContext, layout: DatasetLayout, flags: DatasetFlags, reporter: Reporter): Promise<number> {
  let merged: Merged[];
  try {
    merged = await compactDataset(layout, flags.before, outLockOptions(flags.waitLock, ctx.io.signal, reporter), (line) => reporter.warn(`dataset compact: ${line}`));
  } catch (error) {
    if (error instanceof SgqError) throw error;
    throw fileError(error, { what: `cannot compact the dataset ${layout.root}`, exitCode: ExitCode.internal, then: 'nothing was changed for readers' });
  }
  for (const m of merged) reporter.info(`sgq: ${m.kind} route=${m.route} date=${m.date}: ${compactedWords(m)}`);
  if (merged.length === 0) reporter.info(`sgq: nothing to compact in ${layout.root}`);
  return ExitCode.ok;
}

/** What compaction made of a partition's files, in words. */
function compactedWords({ files, rows, rewritten, kept }: Merged): string {
  const made = files > 1 ? `${files} files merged into 1` : '1 file rewritten';
  const older = rewritten > 0 && files > 1 ? `, ${rewritten} of them rewritten in the route's columns (an older sgq's)` : files === 1 ? " in the route's columns (an older sgq's)" : '';
  const others = kept ? `; ${kept} of another schema kept as they are` : '';
  return `${made} (${count(rows, 'row')})${older}${others}`;
}

async function info(ctx: CommandContext, layout: DatasetLayout, flags: DatasetFlags, reporter: Reporter): Promise<number> {
  if (flags.schema && flags.files) throw usageError('--schema and --files list different things', 'give one of them (or neither, for the partitions)');
  const rows = flags.schema ? await schemaRows(layout) : flags.files ? await fileRows(layout) : await partitionRows(layout);
  const { formatter, sink } = await ctx.output(flags);
  await formatter.write(rows, false);
  await formatter.end();
  await sink.drain();
  if (!rows.length) reporter.info(`sgq: no partitions in ${layout.root}`);
  reporter.info(serviceLine(layout));
  const differing = flags.schema ? 0 : rows.reduce((n, r) => n + (flags.files ? (r.differs ? 1 : 0) : Number(r.differing)), 0);
  if (differing > 0) {
    const names = flags.files ? 'their rows above say how' : `\`sgq dataset info ${layout.root} --files\` names them`;
    reporter.info(`sgq: ${grouped(differing)} ${differing === 1 ? 'file has' : 'files have'} columns other than their route's (written by an older sgq): ${names}; \`sgq dataset compact ${layout.root}\` rewrites them`);
  }
  if (sink.failure) throw sink.failure;
  return ExitCode.ok;
}

/** Whose records the dataset holds (sgq-dataset.json), in words. */
function serviceLine(layout: DatasetLayout): string {
  let service: string | undefined;
  try {
    service = recordedService(layout);
  } catch (error) {
    return `sgq: ${(error as SgqError).message}`;
  }
  if (service !== undefined) return `sgq: the dataset ${layout.root} holds records of ${serviceName(service)} (${SERVICE_FILE})`;
  return holdsFiles(layout)
    ? `sgq: the dataset ${layout.root} names no service (written by sgq 3.x): the next run against a service other than sgq's sandbox claims it`
    : `sgq: the dataset ${layout.root} names no service yet: its first run claims it`;
}
