import type { CommandContext } from '../../program/context.js';
import type { Reporter } from '../../stderr/reporter.js';
import { stateOwner } from '../../run/connection.js';
import { openSnapshotStore } from '../../snapshots/open-store.js';
import { routeOf, type HistorySeries, type Period } from './history-series.js';
import { storeSeries } from './history-store.js';

// Where `sgq history` reads from: the snapshot store of the profile's service (as `sgq diff`
// does), or with --dataset the runs a Parquet dataset kept.

export interface HistorySource {
  /** A user's series in the period (`lists`: who came and left, for the page); undefined when nothing of it is kept. */
  series(user: string, period: Period, lists: boolean): Promise<HistorySeries | undefined>;
  /** The error and hint for a user of whom nothing is kept. */
  nothingOf(user: string): [string, string];
}

export interface SourceFlags {
  following?: boolean;
  how?: string;
  dataset?: string;
  snapshotDir?: string;
}

export async function openHistorySource(ctx: CommandContext, flags: SourceFlags, reporter: Reporter): Promise<HistorySource> {
  const route = routeOf(flags.following);
  const list = flags.following ? 'following' : 'followers';
  const warn = (line: string) => reporter.warn(line);
  if (flags.dataset !== undefined) {
    const { datasetSeries } = await import('./history-dataset.js');
    const dir = flags.dataset;
    return {
      series: (user, period, lists) => datasetSeries(dir, { route, user }, period, { lists, warn, signal: ctx.io.signal }),
      nothingOf: (user) => [`${user}: no run of its ${list} in the dataset ${dir}`, `append one with \`sgq graph ${list} ${user} --all --dataset ${dir}\``],
    };
  }
  const { config, io } = ctx;
  const store = openSnapshotStore(flags.snapshotDir, config, io.env, await stateOwner(ctx));
  const how = flags.how ?? 'username';
  return {
    series: (user, period, lists) => storeSeries(store, { profile: config.profile, route, how, user }, period, { lists, warn, signal: io.signal }),
    nothingOf: (user) => [`${user}: no snapshots of its ${list} in ${store.root} (profile ${config.profile})`, `take one with \`sgq graph ${list} ${user} --all --snapshot\``],
  };
}
