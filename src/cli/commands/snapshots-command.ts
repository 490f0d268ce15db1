import { resolveConfig } from '../../core/config.js';
import { ExitCode } from '../../core/errors.js';
import type { JsonObject } from '../../core/classify.js';
import { createFormatter, terminalWidth, type Format } from '../output/formats.js';
import { Reporter } from '../output/reporter.js';
import { StreamSink } from '../output/sink.js';
import type { CommandContext } from '../context.js';
import { chooseFormat } from './execute.js';
import { openSnapshotStore } from '../churn/open-store.js';

export interface SnapshotsFlags {
  snapshotDir?: string;
  keep?: number;
  output?: Format;
  fields?: string[];
}

/** `sgq snapshots list|prune`. */
export async function runSnapshotsCommand(ctx: CommandContext, verb: string, users: string[], flags: SnapshotsFlags): Promise<number> {
  const { io, globals } = ctx;
  const reporter = await Reporter.open(io, { quiet: globals.quiet, verbose: globals.verbose });
  const config = resolveConfig(globals, io.env);
  const store = openSnapshotStore(flags.snapshotDir, config, io.env);
  const only = users.length ? new Set(users) : undefined;

  if (verb === 'prune') {
    const removed = await store.prune(flags.keep!, only);
    reporter.info(`sgq: removed ${removed} snapshot${removed === 1 ? '' : 's'}; kept the newest ${flags.keep} of each user in ${store.root}`);
    return ExitCode.ok;
  }

  const format = chooseFormat(flags, config, io.stdoutIsTTY);
  const sink = new StreamSink(io.stdout, () => undefined);
  const formatter = await createFormatter(format, sink, { fields: flags.fields, width: terminalWidth(io) });
  const rows: JsonObject[] = store
    .list()
    .filter((s) => !only || only.has(s.meta.user))
    .map(({ meta, dataPath }) => ({
      user: meta.user,
      route: meta.route,
      how: meta.how,
      profile: meta.profile,
      taken_at: meta.taken_at,
      records: meta.records,
      pages: meta.pages,
      credits_used: meta.credits_used,
      complete: meta.complete,
      file: dataPath,
    }));
  formatter.write(rows, false);
  formatter.end();
  await sink.drain();
  if (!rows.length) reporter.info(`sgq: no snapshots${only ? ' of those users' : ''} in ${store.root}`);
  if (sink.failure) throw sink.failure;
  return ExitCode.ok;
}
