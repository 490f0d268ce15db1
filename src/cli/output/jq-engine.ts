// What runs jq over a batch of records, the same in the worker thread (jq-worker.ts) and, where
// no worker file exists (sgq run from its sources), in the main thread. Plain data in and out:
// no sgq errors, so the worker bundle stays small.

export type Jq = Awaited<ReturnType<typeof import('jq-wasm').loadJq>>;
/** jq's answer; the build's copy also gives stdout's bytes, valid until its next call (scripts/jq-wasm-io.mjs). */
type JqResult = ReturnType<Jq['raw']> & { stdoutBytes?: Uint8Array };

/** What the filter needs besides the records: its text and jq's flags (-c, --arg, --argjson). */
export interface JqProgram {
  filter: string;
  flags: string[];
}

/** One batch's results: the output lines, what the filter wrote to stderr, and the first record it failed on. */
export interface BatchResult {
  /** jq's output as text, or as UTF-8 bytes from the build's copy (a buffer of its own, to transfer). */
  out: string | Uint8Array;
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

/**
 * jq's results, strings raw (as `jq -r` and `gh --jq` print them), one per line. The build's
 * copy ran jq with -r and hands its bytes over as they are (copied out of its sink, which the
 * next call reuses); the published package trims its text, so it runs with -c and sgq makes
 * the strings raw itself.
 */
function printed(result: JqResult): string | Uint8Array {
  if (result.stdoutBytes) return result.stdoutBytes.slice();
  const stdout = result.stdout;
  if (stdout === '') return '';
  let out = '';
  for (const line of stdout.split('\n')) out += `${line.startsWith('"') ? (JSON.parse(line) as string) : line}\n`;
  return out;
}

/**
 * Outputs of several calls as one: all text, or all bytes (one jq handle gives one kind), in
 * a buffer of their own, to be transferred (Buffer.concat may hand out a view of Node's shared
 * pool, which Node 22 and later refuse to transfer, and Node 20 would detach).
 */
function joined(parts: readonly (string | Uint8Array)[]): string | Uint8Array {
  if (parts.every((p) => typeof p === 'string')) return parts.join('');
  const bytes = parts as readonly Uint8Array[];
  const out = new Uint8Array(bytes.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of bytes) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

const failed = (result: JqResult) => result.exitCode === 5 || /^jq: error/m.test(result.stderr);

// jq-wasm reads its input as a string, which it encodes to UTF-8 again; the build's copy takes
// the bytes themselves (scripts/jq-wasm-io.mjs marks its handle `bytes`). Run from sources, the
// package as published gets the text.
const decoder = new TextDecoder();

const NEWLINE = 0x0a;

/**
 * Runs the filter over each record of the batch (ByteBatch: JSON texts, one a line; one jq call:
 * each call recompiles the filter and jq's builtins, about 1.5 ms, so a call per page cost more
 * than jq's own work), or once over the array of them with `slurp`. When a record fails, halves
 * of the batch are run again to find the first one, so the output holds exactly the results before it.
 */
export function runBatch(jq: Jq, program: JqProgram, batch: Uint8Array, slurp = false): BatchResult {
  const bytes = (jq as { bytes?: boolean }).bytes === true;
  const flags = bytes ? [...program.flags, '-r'] : program.flags;
  const raw = (records: Uint8Array): JqResult => jq.raw((bytes ? records : decoder.decode(records)) as string, program.filter, flags);
  if (slurp) {
    const whole = raw(asArray(batch));
    return failed(whole) ? { ...beforeError(whole), failedAt: 0, message: jqMessage(whole.stderr) } : { out: printed(whole), stderr: whole.stderr };
  }
  const whole = raw(batch);
  if (!failed(whole)) return { out: printed(whole), stderr: whole.stderr };
  return firstFailure(raw, lines(batch), whole);
}

/** The batch as one JSON array: its lines between brackets, separated by commas (a record's text holds no raw newline). */
function asArray(batch: Uint8Array): Uint8Array {
  const array = new Uint8Array(batch.length + 2);
  array.set(batch, 1);
  for (let at = array.indexOf(NEWLINE); at !== -1; at = array.indexOf(NEWLINE, at + 1)) array[at] = 0x2c;
  [array[0], array[array.length - 1]] = [0x5b, 0x5d];
  return array;
}

/** The batch's records, each a view of its bytes. */
function lines(batch: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let from = 0; from <= batch.length; ) {
    const end = batch.indexOf(NEWLINE, from);
    const to = end === -1 ? batch.length : end;
    out.push(batch.subarray(from, to));
    from = to + 1;
  }
  return out;
}

/** The results before the first record of the batch that fails, found by halving, and jq's message for it. */
function firstFailure(raw: (bytes: Uint8Array) => JqResult, records: readonly Uint8Array[], whole: JqResult): BatchResult {
  const run = (from: number, to: number) => raw(joinLines(records.slice(from, to)));
  // The first failing record lies in [lo, hi); everything before lo ran cleanly into `out`.
  let [lo, hi, stderr, last] = [0, records.length, '', whole];
  const out: (string | Uint8Array)[] = [];
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    const half = run(lo, mid);
    if (failed(half)) [hi, last] = [mid, half];
    else {
      out.push(printed(half));
      [lo, stderr] = [mid, stderr + half.stderr];
    }
  }
  // Run again alone: its results are those of the failing record only (and the sink's bytes are fresh).
  if (records.length > 1) last = run(lo, lo + 1);
  const partial = beforeError(last);
  return { out: joined([...out, partial.out]), stderr: stderr + partial.stderr, failedAt: lo, message: jqMessage(last.stderr) };
}

/**
 * What a failing record printed before its error, as jq prints it (`.a, error("x")` prints
 * `.a` first): its results, and what it wrote to stderr (debug, stderr) before jq's message.
 */
function beforeError(result: JqResult): { out: string | Uint8Array; stderr: string } {
  const at = result.stderr.search(/^jq: error/m);
  return { out: printed(result), stderr: at === -1 ? '' : result.stderr.slice(0, at) };
}

/** Records' bytes joined with newlines (a copy: the failure path only). */
function joinLines(records: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(records.reduce((n, r) => n + r.length + 1, 0));
  let at = 0;
  for (const record of records) {
    out.set(record, at);
    at += record.length;
    out[at++] = NEWLINE;
  }
  return out;
}
