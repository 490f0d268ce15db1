// What a route command needs only when its line asks for it by a flag (--jq's machinery, the
// snapshots and their diff, the in-process sandbox) is left out of dist/route-main.cjs
// (scripts/build.mjs names the modules): a plain one-page run reads, deserializes and keeps a
// smaller bundle. A line with such a flag runs dist/route-full.cjs, which has everything.

/** Each flag that needs a left-out part, and the key its value has once parsed. */
const LEFT_OUT_BY_FLAG = [
  ['--jq', 'jq'],
  ['--snapshot', 'snapshot'],
  ['--changes', 'changes'],
  ['--snapshot-dir', 'snapshotDir'],
  ['--key', 'key'],
  ['--notify', 'notify'],
  ['--confirm-lost', 'confirmLost'],
  ['--full-every', 'fullEvery'],
  ['--full', 'full'],
  ['--sandbox', 'sandbox'],
] as const;

/** Whether a word of `argv` is `flag` (`--jq F` or `--jq=F`); a mere value that looks like one counts too, harmlessly. */
export const hasFlag = (argv: readonly string[], flag: string): boolean => argv.some((word) => word === flag || word.startsWith(`${flag}=`));

/** Whether the line has one of those flags. */
export function asksForLeftOut(argv: readonly string[]): boolean {
  return LEFT_OUT_BY_FLAG.some(([flag]) => hasFlag(argv, flag));
}

/** Whether parsed values (a command's options with the global ones) ask for a left-out part. */
export function needsLeftOut(values: Record<string, unknown>): boolean {
  return LEFT_OUT_BY_FLAG.some(([, key]) => values[key] !== undefined && values[key] !== false);
}
