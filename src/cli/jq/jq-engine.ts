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

/**
 * jq's own message without its `jq: error (at …): ` prefix, on one line. The place is left out
 * of `error(value)`'s `jq: error (at …) (not a string): …` too: it is a line of the batch, which
 * says nothing of the record (sgq names it), and is 0 or 1 for the same record by where the batch ends.
 */
const jqMessage = (stderr: string): string =>
  (stderr.split('\n').find((line) => line.startsWith('jq: error')) ?? stderr.split('\n')[0] ?? '')
    .replace(/^jq: error(?: \(at [^)]*\))?(?:: | (?=\())/, '')
    .replace(/:$/, '');

/** The flags of a program: compact output, then --arg and --argjson in the order given. */
export function jqFlags(args: readonly (readonly [string, string])[] = [], argjson: readonly (readonly [string, string])[] = []): string[] {
  const flags = ['-c'];
  for (const [name, value] of args) flags.push('--arg', name, value);
  for (const [name, value] of argjson) flags.push('--argjson', name, value);
  return flags;
}

/**
 * jq's message if the filter does not compile, else undefined. jq compiles the filter as
 * written, then reads its inputs: given none, it never runs it, so a check cannot loop forever
 * (`repeat(.)`), and a `module {…};` directive, which must open the program, stays in its place.
 */
export function compileError(jq: Jq, { filter, flags }: JqProgram): string | undefined {
  const check = jq.raw('', filter, flags);
  return check.exitCode === 2 || check.exitCode === 3 ? jqMessage(check.stderr) : undefined;
}

/**
 * jq's results, strings raw (as `jq -r` and `gh --jq` print them), one per line. The build's
 * copy ran jq with -r and hands its bytes over as they are (copied out of its sink, which the
 * next call reuses); the published package trims its text, so it runs with -c and sgq makes
 * the strings raw itself. With `room`, the bytes are copied there when they fit (see answerBatch).
 */
function printed(result: JqResult, room?: Uint8Array): string | Uint8Array {
  const bytes = result.stdoutBytes;
  if (bytes && room && bytes.length <= room.length) {
    room.set(bytes);
    return room.subarray(0, bytes.length);
  }
  if (bytes) return bytes.slice();
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

const [NEWLINE, QUOTE, BACKSLASH, COMMA] = [0x0a, 0x22, 0x5c, 0x2c];
const [OPEN_ARRAY, CLOSE_ARRAY, OPEN_OBJECT, CLOSE_OBJECT] = [0x5b, 0x5d, 0x7b, 0x7d];

/**
 * What a batch holds (ByteBatch), one JSON text a line: `records`, a record a line; `pages`, a
 * page's records as one array a line (one JSON.stringify a page on the main thread instead of
 * one a record); `slurp`, records a line, run as one array.
 */
export type BatchShape = 'records' | 'pages' | 'slurp';

/**
 * Runs the filter over each record of the batch (one jq call: each call recompiles the filter
 * and jq's builtins, about 1.5 ms, so a call per page cost more than jq's own work), or once over
 * the array of them with `slurp`. When a record fails, halves of the batch are run again to find
 * the first one, so the output holds exactly the results before it.
 */
export function runBatch(jq: Jq, program: JqProgram, batch: Uint8Array, shape: BatchShape = 'records', room?: Uint8Array): BatchResult {
  const bytes = (jq as { bytes?: boolean }).bytes === true;
  const flags = bytes ? [...program.flags, '-r'] : program.flags;
  const run = (input: Uint8Array, filter: string): JqResult => jq.raw((bytes ? input : decoder.decode(input)) as string, filter, flags);
  const raw = (records: Uint8Array) => run(records, program.filter);
  if (shape === 'slurp') {
    const whole = raw(asArray(batch));
    return failed(whole) ? { ...beforeError(whole), failedAt: 0, message: jqMessage(whole.stderr) } : { out: printed(whole, room), stderr: whole.stderr };
  }
  if (shape === 'pages') {
    // Each page's records in turn, as jq would read them one a line. The filter's text keeps
    // its first line (`$__loc__`); its last line may end in a comment continued by a
    // backslash (jq 1.8), which takes in the empty line after it, not the `)`.
    const whole = run(batch, `.[] | (${program.filter}\n\n)`);
    if (whole.exitCode === 0 && !failed(whole)) return { out: printed(whole, room), stderr: whole.stderr };
    // A failure (or a filter this wrapping would not fit) runs again a record a line: the
    // failing record, and everything before it, are found as they are for records.
    return runBatch(jq, program, recordLines(batch));
  }
  const whole = raw(batch);
  if (!failed(whole)) return { out: printed(whole, room), stderr: whole.stderr };
  return firstFailure(raw, lines(batch), whole);
}

/**
 * A batch's answer on the lane (the worker's, or this thread's where no worker is built): its
 * results, with jq's output in the batch's own buffer when it fits, and that buffer handed back
 * (`spare`). The lane owns the whole buffer once it is submitted, and jq has read the input by
 * the time it writes there, so a batch costs no buffer of its own for its output: one a batch,
 * freed by the main thread's garbage collection into this thread's malloc arena, held 3-4 MiB
 * of an export's peak RSS with the young generation kept small (jq-v8-flags.ts). jq.ts writes
 * from the buffer, and fills it again only once the sink has handed the bytes on.
 */
export function answerBatch(jq: Jq, program: JqProgram, batch: Uint8Array, shape: BatchShape): BatchResult & { spare: Uint8Array } {
  return { ...runBatch(jq, program, batch, shape, new Uint8Array(batch.buffer)), spare: batch };
}

/**
 * The buffers an answer moves to the main thread (no copy either way): the batch's, to be filled
 * again, which holds jq's output too when it fit (answerBatch); else the output's own, which
 * moves too. Listed once each: a buffer listed twice fails the transfer.
 */
export function buffersOf({ out, spare }: { out: string | Uint8Array; spare: Uint8Array }): ArrayBuffer[] {
  const moved = [spare.buffer as ArrayBuffer];
  if (typeof out !== 'string' && out.buffer !== spare.buffer && out.byteOffset === 0 && out.byteLength === out.buffer.byteLength) moved.push(out.buffer as ArrayBuffer);
  return moved;
}

/**
 * The records of a batch of pages, one a line, their bytes as they are: each page's array
 * (JSON.stringify's, with no white space) loses its brackets, and the commas between its
 * records become newlines. A scan of bytes, strings and nesting followed; the failure path only.
 */
function recordLines(pages: Uint8Array): Uint8Array {
  const out = new Uint8Array(pages.length);
  let [length, depth, inString] = [0, 0, false];
  for (let at = 0; at < pages.length; at++) {
    const byte = pages[at]!;
    if (inString) {
      if (byte === BACKSLASH) out[length++] = pages[at++]!;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) inString = true;
    else if (byte === OPEN_ARRAY || byte === OPEN_OBJECT) {
      if (depth++ === 0) continue;
    } else if (byte === CLOSE_ARRAY || byte === CLOSE_OBJECT) {
      if (--depth === 0) continue;
    } else if (byte === COMMA && depth === 1) {
      out[length++] = NEWLINE;
      continue;
    }
    out[length++] = pages[at]!;
  }
  return out.subarray(0, length);
}

/** The batch as one JSON array: its lines between brackets, separated by commas (a record's text holds no raw newline). */
function asArray(batch: Uint8Array): Uint8Array {
  const array = new Uint8Array(batch.length + 2);
  array.set(batch, 1);
  for (let at = array.indexOf(NEWLINE); at !== -1; at = array.indexOf(NEWLINE, at + 1)) array[at] = COMMA;
  [array[0], array[array.length - 1]] = [OPEN_ARRAY, CLOSE_ARRAY];
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
      [lo, stderr] = [mid, stderrLines(stderr, half.stderr)];
    }
  }
  // Run again alone: its results are those of the failing record only (and the sink's bytes are fresh).
  if (records.length > 1) last = run(lo, lo + 1);
  const partial = beforeError(last);
  return { out: joined([...out, partial.out]), stderr: stderrLines(stderr, partial.stderr), failedAt: lo, message: jqMessage(last.stderr) };
}

/**
 * What a failing record printed before its error, as jq prints it (`.a, error("x")` prints
 * `.a` first): its results, and what it wrote to stderr (debug, stderr) before jq's message.
 */
function beforeError(result: JqResult): { out: string | Uint8Array; stderr: string } {
  const at = result.stderr.search(/^jq: error/m);
  return { out: printed(result), stderr: at === -1 ? '' : result.stderr.slice(0, at).trimEnd() };
}

/** Two runs' stderr as one text: jq's, trimmed, ends without its last newline. */
const stderrLines = (before: string, after: string): string => (before && after ? `${before}\n${after}` : before || after);

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
