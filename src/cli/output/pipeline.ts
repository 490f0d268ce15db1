import { SgqError } from '../../core/errors.js';
import { colorLevel, type Io } from '../start/io.js';
import { createFormatter, terminalWidth, type Format, type Formatter } from '../formats/formats.js';
import type { JqOptions } from '../jq/jq.js';
import type { RouteRecords } from '../formats/formatter.js';
import { pagerSink } from './pager.js';
import type { Reporter } from '../stderr/reporter.js';
import { FileSink, StreamSink, checkOutFile, lockOut, type OutTarget, type Sink } from './sink.js';
import { escapingSink, terminalEscape } from './terminal-text.js';
import type { LockOptions } from '../../fs/lock.js';

// The one output pipeline of every command that writes records: where they go (stdout, a
// pager, or --out through its lock), the format, and the guard that turns a formatter's
// refusal (a --jq runtime error) into the end of the run, as a full disk is.

export interface OutputChoice {
  format: Format;
  fields?: string[];
  header?: boolean;
  wide?: boolean;
  bigintAsString?: boolean;
  pager?: boolean;
  jq?: JqOptions;
  /** `--raw`: the service's bodies as received, written to the sink beside the formatter. */
  raw?: boolean;
  /** A route run's records: Parquet's columns come from their description. */
  routeRecords?: RouteRecords;
}

export interface Output {
  sink: Sink;
  formatter: Formatter;
  /** The first record the formatter refused: the run stops and fails with it. */
  readonly formatFailure?: SgqError;
}

/** `--out FILE` checked (a usage error before any work) and locked; nothing for stdout. */
export interface ClaimedOutput {
  target?: OutTarget;
  release(): void;
}

export async function claimOutput(out: string | undefined, options: Omit<LockOptions, 'what'>): Promise<ClaimedOutput> {
  const target = out === undefined ? undefined : checkOutFile(out);
  const lock = await lockOut(target, options);
  return { target, release: () => lock?.release() };
}

/** Opens the destination and its formatter; `stop` is called when the destination goes away or fails. */
export async function openOutput(io: Io, out: OutTarget | undefined, choice: OutputChoice, reporter: Reporter, stop: () => void): Promise<Output> {
  // While the pager draws, sgq's lines wait for it to end (on its screen they land on its prompt).
  const pagerStarts = () => {
    reporter.stopProgress();
    reporter.holdLines();
  };
  const paged = () => pagerSink(io, choice.pager !== false, stop, pagerStarts, () => reporter.releaseLines());
  const opened: Sink = out ? FileSink.open(out, stop) : (paged() ?? new StreamSink(io.stdout, stop));
  // On a terminal, what the service wrote is shown, never obeyed (terminal-text.ts); a pipe or a file gets it exact.
  const terminal = !out && io.stdoutIsTTY;
  const escape = terminal ? terminalEscape({ format: choice.format, jq: choice.jq !== undefined, raw: choice.raw }) : undefined;
  const sink = escape ? escapingSink(opened, escape) : opened;
  const formatter = await createFormatter(choice.format, sink, {
    fields: choice.fields,
    header: choice.header,
    wide: choice.wide,
    bigintAsString: choice.bigintAsString,
    warn: (line) => reporter.warn(line),
    jq: choice.jq,
    routeRecords: choice.routeRecords,
    toFile: out !== undefined,
    // A table for --out is a file's: neither cut to the terminal's width nor coloured.
    width: out ? undefined : terminalWidth(io),
    color: !out && colorLevel(io, 'stdout') > 0,
    terminal,
    signal: io.signal,
  });
  return guard(sink, formatter, stop);
}

function guard(sink: Sink, formatter: Formatter, stop: () => void): Output {
  let formatFailure: SgqError | undefined;
  const guarded: Formatter = {
    async write(records, lossless) {
      try {
        await formatter.write(records, lossless);
      } catch (error) {
        if (!(error instanceof SgqError)) throw error;
        formatFailure ??= error;
        stop();
        throw error;
      }
    },
    async end() {
      if (formatFailure !== undefined) return;
      try {
        await formatter.end();
      } catch (error) {
        // A refusal at the end (--jq --slurp) is one too: nothing after it counts as delivered.
        if (error instanceof SgqError) formatFailure ??= error;
        throw error;
      }
    },
    get holdsUntilEnd() {
      return formatter.holdsUntilEnd;
    },
    async settle() {
      await formatter.settle?.();
    },
    get columns() {
      return formatter.columns;
    },
    get headerWritten() {
      return formatter.headerWritten;
    },
  };
  return {
    sink,
    formatter: guarded,
    get formatFailure() {
      return formatFailure;
    },
  };
}

/** The lock options of --out for a command's --wait-lock (0: busy at once), told on stderr while it waits. */
export function outLockOptions(waitLock: { ms: number; text: string } | undefined, signal: AbortSignal | undefined, reporter: Pick<Reporter, 'info'>): Omit<LockOptions, 'what'> {
  return { waitMs: waitLock?.ms ?? 0, waitFlag: waitLock && `--wait-lock ${waitLock.text}`, signal, onWait: (line) => reporter.info(line) };
}
