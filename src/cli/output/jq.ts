import type { JsonObject } from '../../core/classify.js';
import { ExitCode, SgqError, usageError } from '../../core/errors.js';
import { stringifyJson } from '../../core/json.js';
import type { Formatter, JqOptions } from './formatter.js';
import { jqFlags } from './jq-engine.js';
import { fieldPath, pathLines } from './jq-paths.js';
// The lane loads node:worker_threads (about 1 ms): only a run with --jq pays for it.
import type { Answer, JqLane } from './jq-lane.js';
import type { Sink } from './sink.js';

export type { JqOptions } from './formatter.js';

// Records go to jq in batches of about this much NDJSON: a jq call recompiles the filter with
// jq's builtins (about 1.5 ms), which, once a page, cost more than jq's own work.
const BATCH_CHARS = 1 << 20;
// Batches queued for the worker at most; the main thread waits for jq beyond that (bounded memory).
const IN_FLIGHT = 2;
// A batch that is not full goes to jq after this long, so that a slow service's pages still show.
const LINGER_MS = 20;

// The lane opened and checked, for the formatter of the same options to take over without
// compiling the filter again.
const opened = new WeakMap<JqOptions, Promise<JqLane>>();

/**
 * Starts jq (jq 1.8 compiled to WebAssembly, in a worker thread; only `--jq` pays for it)
 * and checks that the filter compiles, before any request is sent. Called again with the
 * same options, it hands over the lane it checked.
 */
export function loadJqFilter(options: JqOptions): Promise<JqLane> {
  let lane = opened.get(options);
  if (!lane) {
    lane = openChecked(options);
    opened.set(options, lane);
    lane.catch(() => opened.delete(options));
  }
  return lane;
}

async function openChecked(options: JqOptions): Promise<JqLane> {
  const { openLane } = await import('./jq-lane.js');
  const ready = await openLane({ filter: options.filter, flags: jqFlags(options.args, options.argjson) });
  // A path of names always compiles: jq need not start unless a value needs it (jq-paths.ts).
  const message = fieldPath(options.filter) ? undefined : await ready.check();
  if (message !== undefined) {
    ready.close();
    throw usageError(`--jq does not compile: ${message}`, "see jq's manual, https://jqlang.org/manual/ (sgq runs jq 1.8)");
  }
  return ready;
}

/** Hands jq's answers to the sink in order, counting the records they cover; keeps the first failure. */
class Results {
  /** Records in each batch submitted and not yet answered, in order. */
  readonly sizes: number[] = [];
  /** Records whose results reached the sink. */
  position = 0;
  failure?: SgqError;

  constructor(
    private readonly sink: Sink,
    private readonly options: JqOptions,
  ) {}

  deliver(answers: Answer[]): void {
    for (const answer of answers) {
      const size = this.sizes.shift() ?? 0;
      if (this.failure) continue;
      if (answer.broken !== undefined) this.failure = new SgqError(ExitCode.internal, `--jq stopped: jq itself failed (${answer.broken})`, 'run the same filter with the jq command on sgq -o ndjson');
      if (answer.out) this.sink.write(answer.out);
      if (answer.stderr) this.options.stderr?.(answer.stderr);
      if (answer.failedAt !== undefined && !this.failure) {
        const where = this.options.slurp ? `the array of all ${size.toLocaleString('en-US')} records` : `record ${(this.position + answer.failedAt + 1).toLocaleString('en-US')}`;
        this.failure = new SgqError(ExitCode.internal, `--jq failed on ${where}: ${answer.message || 'halt_error'}`, 'the output holds the results before it');
      }
      this.position += size;
    }
  }
}

/**
 * Runs the filter over each record, or once over the array of all records with `slurp`. jq
 * works on batches of pages beside the main thread, so results reach the sink a little after
 * their records: until they have, the formatter says it holds records (no checkpoint commits
 * over them). A runtime error fails the run naming the record's position, at the next write or
 * at the end; the output holds every result before it.
 */
export function jqFormatter(lane: JqLane, options: JqOptions, sink: Sink): Formatter {
  opened.delete(options);
  let batch: string[] = [];
  let chars = 0;
  let first = true;
  let timer: ReturnType<typeof setTimeout> | undefined;
  // A filter naming a field is answered here while every value is a string, boolean or null.
  let path = options.slurp ? undefined : fieldPath(options.filter);
  const results = new Results(sink, options);
  const deliver = (answers: Answer[]) => results.deliver(answers);
  lane.onAnswer = () => deliver(lane.poll());
  const submit = (slurp = false) => {
    clearTimeout(timer);
    timer = undefined;
    if (batch.length === 0 && !slurp) return;
    results.sizes.push(batch.length);
    lane.submit(batch, slurp);
    [batch, chars, first] = [[], 0, false];
  };
  const check = () => {
    if (results.failure) {
      lane.close();
      throw results.failure;
    }
  };

  return {
    // Pending results count as held: a checkpoint commits only what reached the sink.
    get holdsUntilEnd() {
      if (options.slurp) return true;
      deliver(lane.poll());
      return results.failure !== undefined || batch.length > 0 || lane.inFlight > 0;
    },
    settle() {
      if (options.slurp || results.failure) return;
      submit();
      deliver(lane.waitBelow(0));
    },
    write(records: readonly JsonObject[], lossless = true) {
      check();
      if (records.length === 0) return;
      if (path) {
        const lines = pathLines(records, path);
        if (lines !== undefined) {
          sink.write(lines);
          results.position += records.length;
          return;
        }
        path = undefined; // this page and every later one go to jq, in order
      }
      const text = lossless ? stringifyJson : JSON.stringify;
      for (const r of records) {
        const line = text(r);
        batch.push(line);
        chars += line.length;
      }
      if (options.slurp) return;
      // The first page goes at once: a filter that fails on every record fails on the first page.
      if (first || chars >= BATCH_CHARS) submit();
      else timer ??= setTimeout(() => submit(), LINGER_MS).unref();
      deliver(lane.poll());
      if (lane.inFlight > IN_FLIGHT) deliver(lane.waitBelow(IN_FLIGHT));
      check();
    },
    end() {
      check();
      submit(options.slurp === true);
      deliver(lane.waitBelow(0));
      lane.close();
      check();
    },
  };
}

/** The flags of `--jq` as given on the command line. */
export interface JqFlags {
  jq?: string;
  slurp?: boolean;
  arg?: [string, string][];
  argjson?: [string, string][];
}

/** `--jq`'s options, or undefined without it; `--slurp`, `--arg` and `--argjson` need it. */
export function jqOptions(flags: JqFlags, stderr: (text: string) => void): JqOptions | undefined {
  if (flags.jq === undefined) {
    const orphan = flags.slurp ? '--slurp' : flags.arg ? '--arg' : flags.argjson ? '--argjson' : undefined;
    if (orphan) throw usageError(`${orphan} works with --jq only`, 'add --jq FILTER');
    return undefined;
  }
  return { filter: flags.jq, slurp: flags.slurp, args: flags.arg, argjson: flags.argjson, stderr };
}
