import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { streamBuiltinIn } from '../../src/cli/jq/jq-stream-builtins.js';
import { createFormatter } from '../../src/cli/formats/formats.js';
import { SgqError } from '../../src/core/errors.js';
import { captureSink } from '../helpers/sink.js';

const require = createRequire(import.meta.url);
type Jq = { raw(input: string, filter: string, flags: string[]): { stdout: string; stderr: string; exitCode: number } };

// Filters that read or end jq's input stream would see one batch of records as all of it
// (`reduce inputs` printed a count per batch of 5,000), so --jq refuses them before any request.

const calls: [string, string][] = [
      ['reduce inputs as $r (0; . + 1)', 'inputs'],
      ['[., input]', 'input'],
      ['.a | input_line_number', 'input_line_number'],
      ['if .x then halt else . end', 'halt'],
      ['"\\(.a) then \\(input | .b)"', 'input'],
      ['"\\("\\(inputs)")"', 'inputs'],
      ['{a: input}', 'input'],
      ['{(input | .k): 1}', 'input'],
      ['try input catch "none"', 'input'],
      ['limit(2; inputs)', 'inputs'],
      ['first(inputs)?', 'inputs'],
      ['.a\n# a comment\n| input', 'input'],
      ['# comment \\\\\ninputs', 'inputs'],
      // A definition of its own is refused too (erring on the side of refusing).
      ['def input: 1; input', 'input'],
      ['[1, inputs]', 'inputs'],
      ['{a: (1, inputs)}', 'inputs'],
      ['{a: 1, b: input}', 'input'],
    ];
const notCalls = [
      '.input',
      '.a.inputs | .halt',
      '$input',
      '. as {input: $x} | $x',
      '{input: .a, inputs}',
      '{inputs}',
      '{a: [1, 2], input}',
      '"input and inputs"',
      '.["input"]',
      '# inputs\n.a',
      '# halt \\\nhalt',
      'input_filename',
      '$__loc__ | .file',
      'def f: .; f | halt_error',
      '@base64 "\\(.input)"',
      'ltrimstr("input")',
];

describe('the builtins that read or end the input stream', () => {
  it('are found where the filter calls them: after pipes, in arguments, in interpolations, in objects and conditions', () => {
    for (const [filter, name] of calls) expect([filter, streamBuiltinIn(filter)]).toEqual([filter, name]);
  });

  it('are not found in fields, variables, strings, comments, object keys, definitions or longer names', () => {
    for (const filter of notCalls) expect([filter, streamBuiltinIn(filter)]).toEqual([filter, undefined]);
  });

  it('are found at any depth of interpolation, without recursion (a filter may nest as deep as it likes)', () => {
    const deep = (n: number, inner: string) => `${'"\\('.repeat(n)}${inner}${')"'.repeat(n)}`;
    expect(streamBuiltinIn(deep(100_000, 'inputs'))).toBe('inputs');
    expect(streamBuiltinIn(deep(100_000, '.inputs'))).toBeUndefined();
    expect(streamBuiltinIn(`${'"\\('.repeat(100_000)}`)).toBeUndefined();
  });

  it('agree with jq: a filter found reads or ends the stream (two records at once differ from one at a time), one not found does not', async () => {
    const jq = await (require('jq-wasm') as { loadJq(): Promise<Jq> }).loadJq();
    const records = ['{"a":1,"x":true,"input":5,"inputs":6,"halt":7,"k":"key"}', '{"a":2,"x":false,"input":8,"inputs":9,"halt":0,"k":"key"}'];
    const run = (input: string, filter: string) => jq.raw(input, filter, ['-c']);
    const readsStream = (filter: string) => {
      const together = run(records.join('\n'), filter);
      const apart = records.map((r) => run(r, filter));
      const out = apart.map((a) => a.stdout).filter((o) => o !== '').join('\n');
      return together.stdout !== out || together.exitCode !== Math.max(...apart.map((a) => a.exitCode));
    };
    // Its own `input` is refused though it reads nothing: the one call that is not one.
    for (const [filter] of calls.filter(([f]) => !f.startsWith('def '))) expect([filter, readsStream(filter)]).toEqual([filter, true]);
    for (const filter of notCalls) expect([filter, readsStream(filter)]).toEqual([filter, false]);
  });

  it('make --jq a usage error (exit 2) before jq starts, on one line naming --slurp; with --slurp they run', async () => {
    const error = await createFormatter('ndjson', captureSink(), { jq: { filter: 'reduce inputs as $r (0; . + 1)' } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SgqError);
    expect((error as SgqError).exitCode).toBe(2);
    expect((error as SgqError).message).toMatch(/^--jq cannot run `inputs`: it reads the input stream/);
    expect(`${(error as SgqError).message}${(error as SgqError).hint ?? ''}`).not.toContain('\n');
    const sink = captureSink();
    const slurped = await createFormatter('ndjson', sink, { jq: { filter: '[.[], (try input catch "no more")] | length', slurp: true } });
    await slurped.write([{ i: 1 }, { i: 2 }], true);
    await slurped.end();
    expect(sink.text).toBe('3\n');
  });
});
