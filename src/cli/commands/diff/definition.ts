import { Option } from 'commander';
import { defineCommand, helpText } from '../../program/define.js';
import type { DiffFlags } from './runner.js';
import { bigintOption, simpleShapeOptions, snapshotDirOption, waitLockOption, wideOption } from '../../program/options.js';
import { nonEmpty } from '../../program/parsers.js';

export const diffCommand = defineCommand<DiffFlags>({
  name: 'diff',
  summary: 'Followers gained and lost between the last two snapshots of a user, or between two exports',
  arguments: [{ name: '<user-or-file...>', description: 'users (- reads them from stdin), or two files: OLD NEW (NDJSON, JSON, CSV; gzip too)' }],
  options: () => [
    new Option('--following', 'compare snapshots of the accounts a user follows'),
    new Option('--how <kind>', 'the --how the snapshots were taken with (default username)').argParser(nonEmpty('--how')),
    new Option('--at <date>', 'compare the last snapshot taken by DATE (a date means its end) with the one before'),
    new Option('--key <field>', 'the field that identifies an account (default: its id, else its username)').argParser(nonEmpty('--key')),
    new Option('--changed', 'also print records whose other fields changed, as "change":"changed"'),
    snapshotDirOption(),
    ...simpleShapeOptions(),
    wideOption(),
    bigintOption(),
    new Option('--out <file>', 'write to FILE, replaced only when the diff succeeds').argParser(nonEmpty('--out')),
    waitLockOption(),
  ],
  help: helpText({
    notes: 'Prints one record per change, {"change":"gained"|"lost"|"renamed", ...the record} (matched by id, "renamed_from" holds the old username); a summary on stderr.',
    examples: ['sgq diff jack', 'sgq diff jack --following --at 2026-11-20', 'sgq diff old.ndjson new.ndjson.gz --key follower_username', 'sgq diff jack --changed -o csv'],
  }),
  async handler(args, opts, ctx) {
    const { runDiffCommand } = await import('./runner.js');
    return runDiffCommand(ctx, args, opts);
  },
});
