import { existsSync } from 'node:fs';
import { ExitCode, SgqError } from '../../core/errors.js';
import type { JsonObject } from '../../core/classify.js';
import type { CommandContext } from '../context.js';
import type { Format } from '../output/formats.js';
import { compactDataset } from '../dataset/compact.js';
import { bytesOf, partitions } from '../dataset/inventory.js';
import { DatasetLayout } from '../dataset/layout.js';
import { readPartFile } from '../dataset/read.js';
import { outLockOptions } from '../output/pipeline.js';
import { grouped } from '../output/words.js';

export interface DatasetFlags {
  before?: string;
  waitLock?: { ms: number; text: string };
  output?: Format;
  fields?: string[];
}

/** `sgq dataset info|compact DIR`. */
export async function runDatasetCommand(ctx: CommandContext, verb: 'info' | 'compact', dir: string, flags: DatasetFlags): Promise<number> {
  const reporter = await ctx.reporter();
  const layout = new DatasetLayout(dir);
  if (!existsSync(layout.root)) throw new SgqError(ExitCode.usage, `no dataset at ${layout.root}`, 'give the folder a run wrote with --dataset');
  if (verb === 'compact') {
    let merged;
    try {
      merged = await compactDataset(layout, flags.before, outLockOptions(flags.waitLock, ctx.io.signal, reporter));
    } catch (error) {
      if (error instanceof SgqError) throw error;
      throw new SgqError(ExitCode.internal, `cannot compact the dataset ${layout.root}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, 'nothing was changed for readers; check free space and permissions');
    }
    for (const m of merged) {
      const kept = m.kept ? `; ${m.kept} of another schema kept as they are` : '';
      reporter.info(`sgq: ${m.kind} route=${m.route} date=${m.date}: ${m.files} files merged into 1 (${grouped(m.rows)} rows)${kept}`);
    }
    if (merged.length === 0) reporter.info(`sgq: nothing to compact in ${layout.root}`);
    return ExitCode.ok;
  }
  const rows: JsonObject[] = [];
  for (const p of partitions(layout)) {
    let count = 0;
    for (const name of p.files) count += (await readPartFile(`${p.folder}/${name}`)).rows;
    rows.push({ kind: p.kind, route: p.route, date: p.date, files: p.files.length, rows: count, bytes: bytesOf(p) });
  }
  const { formatter, sink } = await ctx.output(flags);
  await formatter.write(rows, false);
  await formatter.end();
  await sink.drain();
  if (!rows.length) reporter.info(`sgq: no partitions in ${layout.root}`);
  if (sink.failure) throw sink.failure;
  return ExitCode.ok;
}
