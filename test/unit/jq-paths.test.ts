import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadJq } from 'jq-wasm';
import { createFormatter } from '../../src/cli/output/formats.js';
import { jqFlags, runBatch } from '../../src/cli/output/jq-engine.js';
import { fieldPath, pathLines } from '../../src/cli/output/jq-paths.js';
import { parseJson, stringifyJson } from '../../src/core/json.js';
import type { JsonObject } from '../../src/core/classify.js';
import { captureSink } from '../helpers/sink.js';

/** What the formatter prints (or the error it throws) for the filter over these pages. */
async function formatted(filter: string, pages: JsonObject[][]): Promise<string> {
  const sink = captureSink();
  const f = await createFormatter('ndjson', sink, { jq: { filter } });
  try {
    for (const page of pages) f.write(page);
    f.end();
  } catch (error) {
    return `${sink.text}!${(error as Error).message}`;
  }
  return sink.text;
}

/** What jq itself prints over the same records (no path shortcut), in the same shape. */
async function byJq(filter: string, pages: JsonObject[][]): Promise<string> {
  const jq = await loadJq();
  const records = pages.flat().map((r) => stringifyJson(r));
  const result = runBatch(jq, { filter, flags: jqFlags() }, new TextEncoder().encode(records.join('\n')));
  return result.failedAt === undefined ? result.out : `${result.out}!--jq failed on record ${(result.failedAt + 1).toLocaleString('en-US')}: ${result.message}`;
}

describe('--jq .field answered without jq', () => {
  it('knows a path of plain names, and nothing else', () => {
    expect(fieldPath('.username')).toEqual(['username']);
    expect(fieldPath(' .user.screen_name ')).toEqual(['user', 'screen_name']);
    for (const other of ['.', '.a[]', '.a | .b', '.["a"]', '.a?', '..', '.a,.b', '.1a', '$x', '.a.b | length']) expect(fieldPath(other)).toBeUndefined();
  });

  it('answers strings, booleans and null; any other value is left to jq', () => {
    expect(pathLines([{ a: 'x\ny' }, { a: null }, { b: 1 }, { a: true }] as JsonObject[], ['a'])).toBe('x\ny\nnull\nnull\ntrue\n');
    expect(pathLines([{ a: { b: 'deep' } }, { a: null }] as JsonObject[], ['a', 'b'])).toBe('deep\nnull\n');
    for (const value of [1, 2.5, [], {}, parseJson('{"n":1.0}')]) expect(pathLines([{ a: value }] as JsonObject[], ['a'])).toBeUndefined();
    expect(pathLines([{ a: 'text' }] as JsonObject[], ['a', 'b'])).toBeUndefined(); // jq: cannot index string
    expect(pathLines([parseJson('{"__proto__":"p"}') as JsonObject], ['__proto__'])).toBe('p\n');
    expect(pathLines([{}] as JsonObject[], ['constructor'])).toBe('null\n');
  });

  it('prints what jq prints, errors and all, over any records and pages (fast-check)', async () => {
    const value = fc.oneof(fc.string(), fc.constantFrom(null, true, false), fc.jsonValue({ maxDepth: 2 }), fc.dictionary(fc.constantFrom('b', 'c'), fc.jsonValue({ maxDepth: 1 })));
    const record = fc.record({ a: value, z: fc.string() }, { requiredKeys: [] }) as fc.Arbitrary<JsonObject>;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(record, { maxLength: 6 }), { maxLength: 4 }), fc.constantFrom('.a', '.a.b', '.z', '.missing'), async (pages, filter) => {
        expect(await formatted(filter, pages)).toBe(await byJq(filter, pages));
      }),
      { numRuns: 150 },
    );
  });
});
