import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a build script, plain JavaScript
import { withBulkIo } from '../../scripts/jq-wasm-io.mjs';
import { answerBatch, buffersOf, runBatch } from '../../src/cli/jq/jq-engine.js';
import { tempDir } from '../helpers/run.js';

// The build gives jq-wasm's stdin and stdout a bulk path and lets its input be bytes
// (scripts/jq-wasm-io.mjs). Here the patched glue is loaded as the bundle loads it, and must
// print what the package as published prints.

const require = createRequire(import.meta.url);
const glue = require.resolve('jq-wasm');
type Answer = { stdout: string; stderr: string; exitCode: number; stdoutBytes?: Uint8Array; stdoutWrites?: number };
type Jq = { raw(input: string | Uint8Array, filter: string, flags: string[]): Answer; bytes?: boolean };
const fields = ({ stdout, stderr, exitCode }: Answer) => ({ stdout, stderr, exitCode });

async function patchedJq(): Promise<Jq> {
  const dir = tempDir('sgq-jq-io-');
  mkdirSync(join(dir, 'build'));
  copyFileSync(require.resolve('jq-wasm/jq.wasm'), join(dir, 'build', 'jq.wasm'));
  writeFileSync(join(dir, 'jq-wasm.cjs'), (withBulkIo as (s: string) => string)(readFileSync(glue, 'utf8')));
  return ((await (require(join(dir, 'jq-wasm.cjs')) as { loadJq(): Promise<Jq> }).loadJq()));
}

describe('jq-wasm with bulk input and output (the build plugin)', () => {
  it('prints what the published package prints, over input and output of several MiB, and takes bytes', async () => {
    const jq = await patchedJq();
    const plain = await (require('jq-wasm') as { loadJq(): Promise<Jq> }).loadJq();
    expect(jq.bytes).toBe(true);
    const lines = Array.from({ length: 40_000 }, (_, i) => `{"i":${i},"s":"é中😀\\t${'x'.repeat(i % 37)}","n":12345678901234567890${i},"d":0.1000000000000000055511151231257827}`);
    const input = lines.join('\n');
    // stdout is written straight into the sink, stderr (debug here) through its device, in turn.
    for (const filter of ['.', '.s', 'select(.i % 1000 == 7) | {i, n}', 'if .i == 30000 then error("x") else .i end', 'if .i % 9999 == 0 then debug else . end | .s']) {
      const expected = plain.raw(input, filter, ['-c']);
      const fromBytes = jq.raw(new TextEncoder().encode(input), filter, ['-c']);
      expect(fields(fromBytes)).toEqual(expected);
      // The bytes are jq's output as it wrote it, untrimmed: every result ends with its newline.
      expect(new TextDecoder().decode(fromBytes.stdoutBytes)).toBe(expected.stdout === '' ? '' : `${expected.stdout}\n`);
      expect(fields(jq.raw(input, filter, ['-c']))).toEqual(expected);
    }
    expect(jq.raw(input, '.', ['-c']).stdout).toBe(input);
  });

  it('gives the bytes of jq -r as jq prints them: raw strings keep their spaces and newlines, which the text trims', async () => {
    const jq = await patchedJq();
    const answer = jq.raw(new TextEncoder().encode('{"s":"  a\\nb\\t "}\n{"s":"\\n"}\n{"s":{"x":1}}'), '.s', ['-c', '-r']);
    expect(new TextDecoder().decode(answer.stdoutBytes)).toBe('  a\nb\t \n\n\n{"x":1}\n');
    expect(answer.stdout).toBe('a\nb\t \n\n\n{"x":1}');
  });

  it("a batch's output is bytes in a buffer of their own, which the worker can transfer, after a failure too", async () => {
    const jq = (await patchedJq()) as unknown as Parameters<typeof runBatch>[0];
    const records = new TextEncoder().encode(Array.from({ length: 40 }, (_, i) => `{"i":${i}}`).join('\n'));
    for (const filter of ['.i', 'if .i == 30 then error("x") else .i end']) {
      const { out } = runBatch(jq, { filter, flags: ['-c'] }, records);
      expect(out).toBeInstanceOf(Uint8Array);
      const bytes = out as Uint8Array;
      expect([bytes.byteOffset, bytes.byteLength]).toEqual([0, bytes.buffer.byteLength]);
      expect(new TextDecoder().decode(bytes)).toBe(Array.from({ length: filter === '.i' ? 40 : 30 }, (_, i) => `${i}\n`).join(''));
    }
  });

  it("on the lane, a batch's output is written into the batch's own buffer when it fits, else into one of its own; each moves once", async () => {
    const jq = (await patchedJq()) as unknown as Parameters<typeof runBatch>[0];
    const text = Array.from({ length: 40 }, (_, i) => `{"i":${i},"s":"é中😀\\t"}`).join('\n');
    const batchOf = (room: number) => {
      const buffer = new Uint8Array(room);
      const { written } = new TextEncoder().encodeInto(text, buffer);
      return buffer.subarray(0, written);
    };
    const expected = (filter: string) => new TextDecoder().decode(runBatch(jq, { filter, flags: ['-c'] }, batchOf(text.length * 3)).out as Uint8Array);
    for (const [filter, fits] of [['.i', true], ['.', true], ['[., ., .]', false], ['if .i == 30 then error("x") else .i end', false]] as const) {
      const batch = batchOf(text.length * 3);
      const answer = answerBatch(jq, { filter, flags: ['-c'] }, batch, 'records');
      const out = answer.out as Uint8Array;
      expect(answer.spare).toBe(batch);
      // A failing batch ran again by halves, which read the input again: its output has a buffer of its own.
      expect(out.buffer === batch.buffer, filter).toBe(fits);
      expect(new TextDecoder().decode(out)).toBe(expected(filter));
      expect(buffersOf(answer)).toEqual(fits ? [batch.buffer] : [batch.buffer, out.buffer]);
    }
    // Output exactly the size of the buffer: the one buffer, listed once.
    const exact = batchOf(text.length * 3);
    const size = (runBatch(jq, { filter: '.', flags: ['-c'] }, exact).out as Uint8Array).length;
    const whole = new Uint8Array(size);
    whole.set(exact.subarray(0, Math.min(exact.length, size)));
    const answer = answerBatch(jq, { filter: '.', flags: ['-c'] }, whole.subarray(0, exact.length), 'records');
    expect([(answer.out as Uint8Array).byteLength, (answer.out as Uint8Array).buffer]).toEqual([whole.buffer.byteLength, whole.buffer]);
    expect(buffersOf(answer)).toEqual([whole.buffer]);
    expect(buffersOf({ out: 'text', spare: whole })).toEqual([whole.buffer]);
  });

  it("writes jq's stdout fully buffered, a few writes for many lines, and every line of every call reaches the sink", async () => {
    const jq = await patchedJq();
    const plain = await (require('jq-wasm') as { loadJq(): Promise<Jq> }).loadJq();
    const input = Array.from({ length: 20_000 }, (_, i) => `{"i":${i},"s":"${'y'.repeat(i % 50)}"}`).join('\n');
    // A failing record, a halt part way and a value larger than the buffer end a call as a clean one does: with all of their output.
    const big = `"${'z'.repeat(5000)}"`;
    for (const filter of ['.', '.s', 'if .i == 15000 then error("x") else .i end', 'if .i == 12345 then halt_error else .s end', `${big}, .i`]) {
      const answer = jq.raw(new TextEncoder().encode(input), filter, ['-c']);
      const expected = plain.raw(input, filter, ['-c']);
      expect(fields(answer)).toEqual(expected);
      // Line-buffered, it was a write a line (20,000 here); a value larger than the buffer is written past it either way.
      if (!filter.startsWith(big)) expect(answer.stdoutWrites).toBeLessThan(expected.stdout.split('\n').length / 10);
    }
  });

  it('fails the build, naming the edit, when the glue no longer matches', () => {
    const changed = readFileSync(glue, 'utf8').replace('stdinBuffer = toByteArray(jsonString);', 'stdinBuffer = encode(jsonString);');
    expect(() => (withBulkIo as (s: string) => string)(changed)).toThrow(/^jq-wasm's glue has changed \(an edit of scripts\/jq-wasm-io\.mjs matches 0 times\)/);
  });
});
