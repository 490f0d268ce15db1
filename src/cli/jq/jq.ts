import type { JsonObject } from '../../core/classify.js';
import { ExitCode, SgqError, interruptedBy, usageError } from '../../core/errors.js';
import { stringifyJson } from '../../core/json.js';
import type { Formatter, JqOptions } from '../formats/formatter.js';
import { jqFlags, type BatchShape } from './jq-engine.js';
import { compileSubset, subsetLines, type Subset } from './subset/jq-subset.js';
import { ByteBatch } from './jq-batch.js';
import { streamBuiltinIn } from './jq-stream-builtins.js';
// The lane loads node:worker_threads (about 1 ms): only a run with --jq pays for it.
import type { Answer, JqLane, LaneStopped } from './jq-lane.js';
import type { Sink } from '../output/sink.js';
import { count, grouped } from '../../core/words.js';

export type { JqOptions } from '../formats/formatter.js';

// Records go to jq in batches of about this much JSON: a jq call recompiles the filter with
// jq's builtins (about 1.5 ms), which, once a page, cost more than jq's own work. Half a MiB:
// with 1 MiB the run's peak RSS was 4.5 MiB higher (99.5 against 95.0 MiB over 200,000 records,
// the malloc arenas of both threads keeping the buffers' memory) for the same CPU (1.19 s
// against 1.20). A buffer has room for a page more, so that the page that fills a batch
// seldom has to grow it.
const BATCH_BYTES = 512 << 10;
const BUFFER_BYTES = BATCH_BYTES + (256 << 10);
// Batches queued for the worker beside the one it runs; the main thread waits for jq beyond
// that (bounded memory). jq is the slower side, so one waiting batch keeps it busy.
const IN_FLIGHT = 1;
// A batch that is not full goes to jq after this long, so that a slow service's pages still
// show; while jq is busy it waits on and fills up (a call costs jq a compile of its builtins).
const LINGER_MS = 20;
/** How long a stopped run waits for jq's answers before it ends jq's thread. */
const STOP_GRACE_MS = 500;

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
  const builtin = options.slurp ? undefined : streamBuiltinIn(options.filter);
  if (builtin) {
    const what = builtin === 'halt' ? 'ends the input stream' : 'reads the input stream';
    throw usageError(`--jq cannot run \`${builtin}\`: it ${what}, and sgq hands jq the records in batches, each of which jq would take for the whole stream`, 'add --slurp to run the filter once over the array of all records, or pipe `-o ndjson` into jq');
  }
  const { openLane } = await import('./jq-lane.js');
  const ready = await openLane({ filter: options.filter, flags: jqFlags(options.args, options.argjson) });
  // A filter of the subset always compiles: jq need not start unless a value needs it (jq-subset.ts).
  const message = subsetOf(options) ? undefined : await ready.check();
  if (message !== undefined) {
    ready.close();
    throw usageError(`--jq does not compile: ${message}`, "see jq's manual, https://jqlang.org/manual/ (sgq runs jq 1.8)");
  }
  return ready;
}

/**
 * The filter compiled by the subset of jq that sgq answers itself, if it is one. Not with
 * --argjson, whose JSON only jq reads (and may refuse).
 */
function subsetOf(options: JqOptions): Subset | undefined {
  if (!subsets.has(options)) subsets.set(options, options.argjson?.length ? undefined : compileSubset(options.filter));
  return subsets.get(options);
}
// Compiled once per run: the check before the first request and the formatter both ask.
const subsets = new WeakMap<JqOptions, Subset | undefined>();

/**
 * Puts a page's records in the batch as jq takes them (runBatch): a page as one array (one
 * JSON.stringify, not one a record), or, for --slurp's one array at the end, a record a line.
 */
function appendRecords(batch: ByteBatch, shape: BatchShape, records: readonly JsonObject[], lossless: boolean): void {
  const text = lossless ? stringifyJson : JSON.stringify;
  if (shape === 'pages') batch.appendPage(text(records as JsonObject[]), records.length);
  else batch.append(records.map((r) => text(r)));
}

/** jq could not go on (its thread died, or jq itself failed): the run ends with what was written. */
const jqStopped = (what: string) => new SgqError(ExitCode.internal, `--jq stopped: ${what}`, 'run the same filter with the jq command on sgq -o ndjson');

/** Hands jq's answers to the sink in order, counting the records they cover; keeps the first failure. */
class Results {
  /** Records in each batch submitted and not yet answered, in order. */
  readonly sizes: number[] = [];
  /** Records whose results reached the sink. */
  position = 0;
  failure?: SgqError;
  /** A stopped run ended jq before it answered: what it held never reaches the output. */
  stopped = false;
  /** Batch buffers back from jq, to be filled again. */
  private readonly spares: Uint8Array[] = [];
  /** Buffers whose bytes (jq's output, answerBatch) went to the sink, which may still be writing them. */
  private readonly writing: Uint8Array[] = [];

  constructor(
    private readonly sink: Sink,
    private readonly options: JqOptions,
  ) {}

  /** Waits for jq to hold at most `n` batches: a thread gone fails the run; a stopped one drops what it held. */
  async waitFor(lane: JqLane, n: number): Promise<void> {
    try {
      this.deliver(await lane.waitBelow(n));
    } catch (error) {
      if ((error as LaneStopped).stopped) this.stopped = true;
      else {
        // What jq answered before its thread died may reach sgq after the death: it goes out first.
        this.deliver(lane.poll());
        this.failure ??= jqStopped((error as Error).message);
      }
    }
  }

  deliver(answers: Answer[]): void {
    for (const answer of answers) {
      const wrote = this.take(answer, this.sizes.shift() ?? 0);
      if (!answer.spare) continue;
      const buffer = new Uint8Array(answer.spare.buffer);
      (wrote && typeof answer.out !== 'string' && answer.out.buffer === buffer.buffer ? this.writing : this.spares).push(buffer);
    }
  }

  /** Writes one answer's results and notes its failure; true if its output went to the sink. */
  private take(answer: Answer, size: number): boolean {
    if (this.failure) return false;
    if (answer.broken !== undefined) this.failure = jqStopped(`jq itself failed (${answer.broken})`);
    const wrote = answer.out?.length > 0;
    if (wrote) this.sink.write(answer.out);
    if (answer.stderr) this.options.stderr?.(answer.stderr);
    if (answer.failedAt !== undefined && !this.failure) {
      const where = this.options.slurp ? `the array of ${size === 1 ? '' : 'all '}${count(size, 'record')}` : `record ${grouped(this.position + answer.failedAt + 1)}`;
      this.failure = new SgqError(ExitCode.internal, `--jq failed on ${where}: ${answer.message || 'halt_error'}`, 'the output holds the results before it');
    }
    this.position += size;
    return wrote;
  }

  /**
   * An empty buffer for the next batch. One whose bytes were written is filled again only once
   * the sink has handed everything to the system: a pipe's write may hold the bytes until the
   * reader takes them. (The run waits for that after each page, so the buffers stay few.)
   */
  spare(): Uint8Array {
    if (this.writing.length > 0 && this.sink.flushed) this.spares.push(...this.writing.splice(0));
    return this.spares.pop() ?? new Uint8Array(BUFFER_BYTES);
  }
}

/**
 * Runs the filter over each record, or once over the array of all records with `slurp`. jq
 * works on batches of pages beside the main thread, so results reach the sink a little after
 * their records: until they have, the formatter says it holds records (no checkpoint commits
 * over them). A runtime error fails the run naming the record's position, at the next write or
 * at the end; the output holds every result before it.
 */
export function jqFormatter(lane: JqLane, options: JqOptions, sink: Sink, signal?: AbortSignal): Formatter {
  opened.delete(options);
  let first = true;
  let timer: ReturnType<typeof setTimeout> | undefined;
  // A filter of the subset is answered here until a value needs jq (jq-subset.ts).
  let subset = options.slurp ? undefined : subsetOf(options);
  const results = new Results(sink, options);
  const batch = new ByteBatch(() => results.spare());
  const deliver = (answers: Answer[]) => results.deliver(answers);
  lane.onAnswer = () => deliver(lane.poll());
  // A stopped run ends within a second: jq has half of it to answer what it holds.
  const onStop = () => lane.stop(STOP_GRACE_MS);
  signal?.addEventListener('abort', onStop, { once: true });
  const shape: BatchShape = options.slurp ? 'slurp' : 'pages';
  /** Hands jq the batch; `force` even an empty one (--slurp of no records is `[]`). */
  const submit = (force = false) => {
    clearTimeout(timer);
    timer = undefined;
    if (batch.records === 0 && !force) return;
    results.sizes.push(batch.records);
    lane.submit(batch.take(), shape);
    first = false;
  };
  const linger = () => {
    if (lane.inFlight === 0) submit();
    else timer = setTimeout(linger, LINGER_MS).unref();
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
      return results.failure !== undefined || batch.records > 0 || lane.inFlight > 0;
    },
    async settle() {
      if (options.slurp || results.failure) return;
      submit();
      await results.waitFor(lane, 0);
      check();
    },
    write(records: readonly JsonObject[], lossless = true) {
      check();
      if (records.length === 0) return;
      if (subset) {
        const lines = subsetLines(records, subset);
        if (lines !== undefined) {
          if (lines) sink.write(lines);
          results.position += records.length;
          return;
        }
        subset = undefined; // this page and every later one go to jq, in order
      }
      appendRecords(batch, shape, records, lossless);
      if (options.slurp) return;
      // The first page goes at once: a filter that fails on every record fails on the first page.
      if (first || batch.length >= BATCH_BYTES) submit();
      else timer ??= setTimeout(linger, LINGER_MS).unref();
      deliver(lane.poll());
      if (lane.inFlight > IN_FLIGHT) return results.waitFor(lane, IN_FLIGHT).then(check);
      check();
    },
    async end() {
      check();
      submit(options.slurp === true);
      await results.waitFor(lane, 0);
      signal?.removeEventListener('abort', onStop);
      lane.close();
      check();
      // An end that returns has delivered everything: one that could not must not let the run claim it did.
      if (results.stopped && results.sizes.length > 0) throw interruptedBy(signal?.reason);
    },
  };
}

export { jqOptions, type JqFlags } from './jq-options.js';
