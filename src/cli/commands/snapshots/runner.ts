import { ExitCode } from '../../../core/errors.js';
import type { JsonObject } from '../../../core/classify.js';
import type { CommandContext } from '../../program/context.js';
import type { Format } from '../../formats/formats.js';
import { openSnapshotStore } from '../../snapshots/open-store.js';
import { stateOwner } from '../../run/connection.js';
import { statSync } from 'node:fs';
import { count } from '../../../core/words.js';

export interface SnapshotsFlags {
  snapshotDir?: string;
  keep?: number;
  output?: Format;
  fields?: string[];
}

/** `sgq snapshots list|prune`. */
export async function runSnapshotsCommand(ctx: CommandContext, verb: string, users: string[], flags: SnapshotsFlags): Promise<number> {
  const { io } = ctx;
  const reporter = await ctx.reporter();
  const store = openSnapshotStore(flags.snapshotDir, ctx.config, io.env, await stateOwner(ctx));
  const only = users.length ? new Set(users) : undefined;

  if (verb === 'prune') {
    const removed = await store.prune(flags.keep!, only);
    reporter.info(`sgq: removed ${count(removed, 'snapshot')}; kept the newest ${flags.keep} of each user in ${store.base}`);
    return ExitCode.ok;
  }

  const { formatter, sink } = await ctx.output(flags);
  const rows: JsonObject[] = store
    .list()
    .filter((s) => !only || only.has(s.meta.user))
    .map(({ meta, dataPath, metaPath }) => ({
      user: meta.user,
      route: meta.route,
      how: meta.how,
      profile: meta.profile,
      taken_at: meta.taken_at,
      records: meta.records,
      pages: meta.pages,
      credits_used: meta.credits_used,
      // --full-every's nights between whole ones: the last whole list plus what came since.
      partial: meta.partial === true,
      complete: meta.complete,
      bytes: sizeOnDisk(dataPath, metaPath),
      file: dataPath,
    }));
  await formatter.write(rows, false);
  await formatter.end();
  await sink.drain();
  if (!rows.length) reporter.info(`sgq: no snapshots${only ? ' of those users' : ''} in ${store.base}`);
  if (sink.failure) throw sink.failure;
  return ExitCode.ok;
}

/** What a snapshot takes on disk: its data file and its metadata file, in bytes (0 for one a prune removed meanwhile). */
function sizeOnDisk(...files: string[]): number {
  let bytes = 0;
  for (const file of files) bytes += statSync(file, { throwIfNoEntry: false })?.size ?? 0;
  return bytes;
}
