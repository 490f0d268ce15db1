// What runs jq over a batch of records, the same in the worker thread (jq-worker.ts) and, where
// no worker file exists (sgq run from its sources), in the main thread. Plain data in and out:
// no sgq errors, so the worker bundle stays small.

export type Jq = Awaited<ReturnType<typeof import('jq-wasm/inline').loadJq>>;

/** What the filter needs besides the records: its text and jq's flags (-c, --arg, --argjson). */
export interface JqProgram {
  filter: string;
  flags: string[];
}

/** One batch's results: the output lines, what the filter wrote to stderr, and the first record it failed on. */
export interface BatchResult {
  out: string;
  stderr: string;
  /** Index in the batch of the first record the filter failed on; the output holds every result before it. */
  failedAt?: number;
  /** jq's message for that failure, on one line. */
  message?: string;
}

/** jq's own message without its `jq: error (at …): ` prefix, on one line. */
const jqMessage = (stderr: string): string =>
  (stderr.split('\n').find((line) => line.startsWith('jq: error')) ?? stderr.split('\n')[0] ?? '')
    .replace(/^jq: error(?: \(at [^)]*\))?: /, '')
    .replace(/:$/, '');

/** The flags of a program: compact output, then --arg and --argjson in the order given. */
export function jqFlags(args: readonly (readonly [string, string])[] = [], argjson: readonly (readonly [string, string])[] = []): string[] {
  const flags = ['-c'];
  for (const [name, value] of args) flags.push('--arg', name, value);
  for (const [name, value] of argjson) flags.push('--argjson', name, value);
  return flags;
}

/**
 * jq's message if the filter does not compile, else undefined. Compiled inside a branch that
 * never runs, so that checking a filter cannot loop forever (`repeat(.)`); jq's message comes
 * from the filter as written, which does not run either.
 */
export function compileError(jq: Jq, { filter, flags }: JqProgram): string | undefined {
  const check = jq.raw('null', `if false then (\n${filter}\n) else empty end`, ['-n', ...flags]);
  if (check.exitCode !== 3 && check.exitCode !== 2) return undefined;
  const plain = jq.raw('null', filter, ['-n', ...flags]);
  return jqMessage(plain.exitCode === 2 || plain.exitCode === 3 ? plain.stderr : check.stderr);
}

/** jq's compact output, strings made raw (as `jq -r` and `gh --jq` print them), one per line. */
function rawLines(stdout: string): string {
  if (stdout === '') return '';
  let out = '';
  for (const line of stdout.split('\n')) out += `${line.startsWith('"') ? (JSON.parse(line) as string) : line}\n`;
  return out;
}

const failed = (result: { stderr: string; exitCode: number }) => result.exitCode === 5 || /^jq: error/m.test(result.stderr);

/**
 * Runs the filter over each record of the batch (one jq call: each call recompiles the filter
 * and jq's builtins, about 1.5 ms, so a call per page cost more than jq's own work), or once
 * over the array of them with `slurp`. When a record fails, halves of the batch are run again
 * to find the first one, so the output holds exactly the results before it.
 */
export function runBatch(jq: Jq, program: JqProgram, records: readonly string[], slurp = false): BatchResult {
  const run = (from: number, to: number) => jq.raw(slurp ? `[${records.join(',')}]` : records.slice(from, to).join('\n'), program.filter, program.flags);
  const whole = run(0, records.length);
  if (!failed(whole)) return { out: rawLines(whole.stdout), stderr: whole.stderr };
  if (slurp) return { out: '', stderr: '', failedAt: 0, message: jqMessage(whole.stderr) };
  // The first failing record lies in [lo, hi); everything before lo ran cleanly into `out`.
  let [lo, hi, out, stderr, last] = [0, records.length, '', '', whole];
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    const half = run(lo, mid);
    if (failed(half)) [hi, last] = [mid, half];
    else [lo, out, stderr] = [mid, out + rawLines(half.stdout), stderr + half.stderr];
  }
  if (records.length > 1) last = run(lo, lo + 1);
  return { out, stderr, failedAt: lo, message: jqMessage(last.stderr) };
}
