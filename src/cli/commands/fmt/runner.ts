import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { isErrorRecord, isObject, type JsonObject } from '../../../core/classify.js';
import { ExitCode, SgqError, interruptedBy, usageError } from '../../../core/errors.js';
import { envSetting } from '../../../core/config.js';
import { JsonTooDeep, parseJson, parsedLosslessly, type Json } from '../../../core/json.js';
import { chooseFormat, type Formatter } from '../../formats/formats.js';
import { claimOutput, openOutput, outLockOptions } from '../../output/pipeline.js';
import { jqOptions, loadJqFilter, type JqFlags } from '../../jq/jq.js';
import { Reporter } from '../../stderr/reporter.js';
import type { Sink } from '../../output/sink.js';
import type { CommandContext } from '../../program/context.js';
import type { OutputFlags } from '../../run/plan.js';

/** The output flags of a fetching command that apply to records read rather than fetched. */
export type FmtFlags = JqFlags & Pick<OutputFlags, 'output' | 'fields' | 'header' | 'wide' | 'bigintAsString' | 'pager' | 'out' | 'waitLock'>;

// Records go to the formatter in batches. Larger than a page of the service: nothing waits on
// a page here, and each batch costs --jq one call, about 10 ms before any record is read.
const BATCH = 5000;

/**
 * The records of one line of what sgq wrote: a record (NDJSON), or a response body as `--raw`
 * wrote it (an object whose `data` is a list), whose error records are left out.
 */
function recordsOfLine(value: Json): JsonObject[] | undefined {
  if (!isObject(value)) return undefined;
  if (!Array.isArray(value.data)) return [value];
  return value.data.filter((item): item is JsonObject => isObject(item) && !isErrorRecord(item));
}

/** Writes the records of each line through the formatter, in batches, until the input ends or `done`. */
async function render(lines: AsyncIterable<string>, name: string, formatter: Formatter, sink: Sink, done: () => boolean): Promise<void> {
  let batch: JsonObject[] = [];
  let lossless = false;
  const flush = async () => {
    await formatter.write(batch, lossless);
    batch = [];
    lossless = false;
    await sink.drain();
  };
  let lineNumber = 0;
  for await (const line of lines) {
    lineNumber++;
    if (done()) return;
    if (line.trim() === '') continue;
    let value: Json;
    try {
      value = parseJson(line);
    } catch (error) {
      if (error instanceof JsonTooDeep) throw usageError(`${name} line ${lineNumber} is ${error.message}`);
      throw usageError(`${name} line ${lineNumber} is not JSON`, 'sgq fmt reads NDJSON records or --raw bodies, one per line');
    }
    const records = recordsOfLine(value);
    if (!records) throw usageError(`${name} line ${lineNumber} is not a JSON object`, 'sgq fmt reads NDJSON records or --raw bodies, one per line');
    lossless ||= parsedLosslessly(value);
    batch.push(...records);
    if (batch.length >= BATCH) await flush();
  }
  if (!done()) await flush();
}

/** `sgq fmt [FILE|-]`: re-renders records sgq wrote before, offline, with every output option. */
export async function runFmtCommand(ctx: CommandContext, file: string | undefined, flags: FmtFlags): Promise<number> {
  const { io, globals } = ctx;
  const reporter = await Reporter.open(io, { quiet: globals.quiet, verbose: globals.verbose });
  const jq = jqOptions(flags, (text) => reporter.passThrough(text));
  // No configuration: the flags, the --out name, else table on a terminal and NDJSON elsewhere.
  const format = chooseFormat(flags, {}, io.stdoutIsTTY, (line) => reporter.warn(line));
  // No profile is read: the flag, else the environment.
  const bigintAsString = flags.bigintAsString ?? envSetting('bigint-as-string', io.env) === 'true';
  if (jq) await loadJqFilter(jq);
  // --out as every command writes it: checked first, locked, through a temporary file, links and FIFOs respected.
  const claimed = await claimOutput(flags.out, outLockOptions(flags.waitLock, io.signal, reporter));
  const fromStdin = file === undefined || file === '-';
  const name = fromStdin ? 'stdin' : file;
  const input: Readable = fromStdin ? io.stdin : createReadStream(file);
  const opened = fromStdin ? Promise.resolve() : new Promise<void>((resolve, reject) => input.once('open', () => resolve()).once('error', reject));
  await opened.catch((error: NodeJS.ErrnoException) => {
    throw usageError(`cannot read ${name}: ${error.code ?? error.message}`, 'give a file sgq wrote, or - for stdin');
  });

  let closed = false;
  const onClose = () => (closed = true);
  const { sink, formatter } = await openOutput(io, claimed.target, { format, fields: flags.fields, header: flags.header, wide: flags.wide, bigintAsString, pager: flags.pager, jq }, reporter, onClose).catch((error: unknown) => {
    claimed.release();
    throw error;
  });
  let failure: unknown;
  // Ctrl-C or SIGTERM ends the reading at once, also while stdin is idle.
  const lines = createInterface({ input, crlfDelay: Infinity });
  const stop = () => {
    lines.close();
    input.destroy();
  };
  io.signal?.addEventListener('abort', stop, { once: true });
  if (io.signal?.aborted) stop();
  try {
    await render(lines, name, formatter, sink, () => closed || io.signal?.aborted === true);
    if (!closed && !io.signal?.aborted) await formatter.end();
    // Checked after the end too: a stop heard while jq finished (--jq) leaves its answers out.
    if (io.signal?.aborted) throw interruptedBy(io.signal.reason);
  } catch (error) {
    failure = io.signal?.aborted ? interruptedBy(io.signal.reason) : error;
  } finally {
    io.signal?.removeEventListener('abort', stop);
  }
  // What was rendered before a failure is kept as FILE.partial, as a run keeps what it fetched.
  const note = await sink.finish(failure === undefined);
  claimed.release();
  if (note) reporter.error(note);
  if (sink.failure) throw sink.failure;
  if (failure === undefined) return ExitCode.ok;
  const code = (failure as NodeJS.ErrnoException).code;
  throw failure instanceof SgqError || code === undefined ? failure : usageError(`cannot read ${name}: ${code}`);
}
