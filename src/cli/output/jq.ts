import type { JsonObject } from '../../core/classify.js';
import { ExitCode, SgqError, usageError } from '../../core/errors.js';
import { stringifyJson } from '../../core/json.js';
import type { Formatter, JqOptions } from './formatter.js';
import type { Sink } from './sink.js';

export type { JqOptions } from './formatter.js';

type Jq = Awaited<ReturnType<typeof import('jq-wasm/inline').loadJq>>;
// One jq for the process: the filter is checked before any request, then run.
let handle: Promise<Jq> | undefined;

/** jq's own message without its `jq: error (at …): ` prefix, on one line. */
const jqMessage = (stderr: string): string =>
  (stderr.split('\n').find((line) => line.startsWith('jq: error')) ?? stderr.split('\n')[0] ?? '')
    .replace(/^jq: error(?: \(at [^)]*\))?: /, '')
    .replace(/:$/, '');

/**
 * Loads jq (jq 1.8 compiled to WebAssembly, embedded in the bundle; only `--jq` pays for it)
 * and checks that the filter compiles, before any request is sent.
 */
export async function loadJqFilter(options: JqOptions): Promise<{ flags: string[]; jq: Jq }> {
  handle ??= import('jq-wasm/inline').then(({ loadJq }) => loadJq());
  const jq = await handle;
  const flags = ['-c'];
  for (const [name, value] of options.args ?? []) flags.push('--arg', name, value);
  for (const [name, value] of options.argjson ?? []) flags.push('--argjson', name, value);
  // Compiled inside a branch that never runs, so that checking a filter cannot loop forever
  // (`repeat(.)`); jq's message comes from the filter as written, which does not run either.
  const check = jq.raw('null', `if false then (\n${options.filter}\n) else empty end`, ['-n', ...flags]);
  if (check.exitCode === 3 || check.exitCode === 2) {
    const plain = jq.raw('null', options.filter, ['-n', ...flags]);
    const message = jqMessage(plain.exitCode === 2 || plain.exitCode === 3 ? plain.stderr : check.stderr);
    throw usageError(`--jq does not compile: ${message}`, "see jq's manual, https://jqlang.org/manual/ (sgq runs jq 1.8)");
  }
  return { flags, jq };
}

/** jq's compact output, strings made raw (as `jq -r` and `gh --jq` print them), one per line. */
function rawLines(stdout: string): string {
  if (stdout === '') return '';
  let out = '';
  for (const line of stdout.split('\n')) out += `${line.startsWith('"') ? (JSON.parse(line) as string) : line}\n`;
  return out;
}

/**
 * Runs the filter over each record (a page goes in as one NDJSON input, since a call per record
 * costs more than jq's work), or once over the array of all records with `slurp`. A runtime
 * error fails the run naming the record's position; the output holds every result before it.
 */
export function jqFormatter(loaded: { flags: string[]; jq: Jq }, options: JqOptions, sink: Sink): Formatter {
  const { jq, flags } = loaded;
  const run = (input: string, extra: string[] = []) => jq.raw(input, options.filter, [...flags, ...extra]);
  const failed = (stderr: string, exitCode: number) => exitCode === 5 || /^jq: error/m.test(stderr);
  let position = 0;
  const slurped: string[] = [];
  const fail = (where: string, stderr: string) =>
    new SgqError(ExitCode.internal, `--jq failed on ${where}: ${jqMessage(stderr) || 'halt_error'}`, 'the output holds the results before it');

  return {
    holdsUntilEnd: options.slurp === true,
    write(records: readonly JsonObject[], lossless = true) {
      if (records.length === 0) return;
      const text = lossless ? stringifyJson : JSON.stringify;
      if (options.slurp) {
        for (const r of records) slurped.push(text(r));
        return;
      }
      const result = run(records.map((r) => text(r)).join('\n'));
      if (!failed(result.stderr, result.exitCode)) {
        if (result.stderr) options.stderr?.(result.stderr);
        sink.write(rawLines(result.stdout));
        position += records.length;
        return;
      }
      // Rare: run the page again one record at a time, to write what came before and name the record.
      let out = '';
      for (const r of records) {
        position++;
        const one = run(text(r));
        if (failed(one.stderr, one.exitCode)) {
          sink.write(out);
          throw fail(`record ${position.toLocaleString('en-US')}`, one.stderr);
        }
        out += rawLines(one.stdout);
      }
      sink.write(out);
    },
    end() {
      if (!options.slurp) return;
      const result = run(`[${slurped.join(',')}]`);
      if (failed(result.stderr, result.exitCode)) throw fail(`the array of all ${slurped.length.toLocaleString('en-US')} records`, result.stderr);
      if (result.stderr) options.stderr?.(result.stderr);
      sink.write(rawLines(result.stdout));
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
