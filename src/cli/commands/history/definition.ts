import { Option } from 'commander';
import { defineCommand, helpText } from '../../program/define.js';
import type { HistoryFlags } from './runner.js';
import { FORMATS } from '../../../core/format-names.js';
import { snapshotDirOption, waitLockOption, wideOption } from '../../program/options.js';
import { fieldList, nonEmpty } from '../../program/parsers.js';

export const historyCommand = defineCommand<HistoryFlags>({
  name: 'history',
  summary: 'Followers over time: the count, gained and lost at each snapshot of a user, as records, a chart or a page',
  arguments: [{ name: '<user...>', description: 'users (- reads them from stdin)' }],
  options: () => [
    new Option('--following', 'the accounts a user follows, not its followers'),
    new Option('--how <kind>', 'the --how the snapshots were taken with (default username)').argParser(nonEmpty('--how')),
    new Option('--since <date>', 'only snapshots taken at or after DATE (ISO 8601 date or date-time, or an age such as 30d)').argParser(nonEmpty('--since')),
    new Option('--until <date>', 'only snapshots taken at or before DATE (a date means its end, UTC)').argParser(nonEmpty('--until')),
    new Option('--dataset <dir>', "read the runs kept in the Parquet dataset DIR instead of the snapshot store (each run's records of the user: see docs/churn.md)").argParser(nonEmpty('--dataset')),
    snapshotDirOption(),
    new Option('--html <file>', 'write a page that opens offline: the charts, and who came and who left at each snapshot').argParser(nonEmpty('--html')),
    new Option('-o, --output <format>', `${FORMATS.join(', ')} (default: from the extension of --out FILE, else a chart on a terminal, else ndjson)`).choices(FORMATS),
    new Option('--fields <list>', 'comma-separated fields to print, in this order').argParser(fieldList),
    wideOption(),
    new Option('--out <file>', 'write the records to FILE, replaced only when the run succeeds').argParser(nonEmpty('--out')),
    waitLockOption(),
  ],
  help: helpText({
    notes:
      'Prints one record per snapshot, oldest first: {"user", "route", "taken_at", "count", "gained", "lost"} (gained and lost are null for a first snapshot). On a terminal, unless -o, --fields or --out is given, it draws a chart of the count and of the gains and losses instead.',
    examples: ['sgq history jack', 'sgq history jack --since 30d -o csv', 'sgq history jack --html history.html', 'sgq history jack --dataset ~/sgq-data -o json'],
  }),
  async handler(args, opts, ctx) {
    const { runHistoryCommand } = await import('./runner.js');
    return runHistoryCommand(ctx, args, opts);
  },
});
