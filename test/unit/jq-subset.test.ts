import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadJq } from 'jq-wasm';
import { createFormatter } from '../../src/cli/formats/formats.js';
import { compileError, jqFlags, runBatch } from '../../src/cli/jq/jq-engine.js';
import { compileSubset, subsetLines } from '../../src/cli/jq/subset/jq-subset.js';
import { regexTest } from '../../src/cli/jq/subset/jq-subset-regex.js';
import { parseJson, stringifyJson } from '../../src/core/json.js';
import type { JsonObject } from '../../src/core/classify.js';
import { captureSink } from '../helpers/sink.js';

/** What the formatter prints (or the error it throws) for the filter over these pages. */
async function formatted(filter: string, pages: JsonObject[][]): Promise<string> {
  const sink = captureSink();
  const f = await createFormatter('ndjson', sink, { jq: { filter } });
  try {
    for (const page of pages) await f.write(page);
    await f.end();
  } catch (error) {
    return `${sink.text}!${(error as Error).message}`;
  }
  return sink.text;
}

/** What jq itself prints over the same records, as sgq hands them to it, in the same shape. */
const jqWasm = loadJq();
async function byJq(filter: string, pages: JsonObject[][]): Promise<string> {
  const jq = await jqWasm;
  const records = pages.flat().map((r) => stringifyJson(r));
  const result = runBatch(jq, { filter, flags: jqFlags() }, new TextEncoder().encode(records.join('\n')));
  const out = typeof result.out === 'string' ? result.out : new TextDecoder().decode(result.out);
  return result.failedAt === undefined ? out : `${out}!--jq failed on record ${(result.failedAt + 1).toLocaleString('en-US')}: ${result.message}`;
}

// Filters of the subset: each must compile in jq, and print what jq prints.
const SUBSET = [
  '.username', ' .user.screen_name ', '.', '.missing', '.a.b', '.n', '.tags',
  'select(.username | test("7$")) | {u: .username, t: .last_checked[0:10]}',
  'select(.a == "x")', 'select(.a != null) | .a', 'select(.flag) | .username', 'select(.flag | not)',
  'select(.a == "x" or .b == true) | {a, b}', 'select(.a and .b) | .username', '.a == .b', '.a != "x"',
  '{u: .username, "the time": .last_checked}', '{}', '{a: .a | .b}', '{a: select(.flag)}', '{n: .n, t: .tags}',
  '.username[2:]', '.username[:-1]', '.username[-3:]', '.last_checked[0:10]', '.tags[1:2]', '.username[5:2]', '.username[-100:100]',
  'select(.username | startswith("ka"))', 'select(.username | endswith("7"))', '.username | test("^a")', '.username | test("b-c")',
  '.username | test("^x y$")', '.username | test("^ab-c$")', '.username | test("")',
  // Regular expressions JavaScript matches as Oniguruma does (jq-subset-regex.ts), and split.
  'select(.username | test("7+$")) | {u: .username, t: .last_checked[0:10]}', 'select(.a | test("a+"))', '.a | test("^x\\\\.y$")', '.username | test("^[a-z_]+[0-9]?$")',
  '.username | test("[^a-z]")', '.username | test("ka.e")', '.username | test("^(ka|vi)")', '.username | test("x|7$")', '.username | test("(_7)?$")', '.username | test("^.$")',
  '{u: .username, parts: (.username | split("_"))}', '.username | split("")', '.last_checked | split("T")', '.a | split("x.y")', '[.username | split("_")] | length', '(.a)', '"lit"', 'null', 'true', '.a | .b | .c', '.user | {screen_name}',
  '.and', '{select: .a}', 'select(.a == .a) | .a',
  // Order, length, alternatives and a few builtins.
  'select(.n > 1)', 'select(.n >= -1) | .n', '.n < 42', '.n <= 0', '.a < .b', '.username > "kaneta"', '.username >= .last_checked', 'select(.a != .n)',
  '.n == 42', '.n != 0', '1 == .n', 'null < false', '0', '-1', '42 | length', '123456789012345',
  '.username | length', '. .a | length', '.a | length', '.n | length', '.tags | length', 'length', '.user | length', '{u: .username, n: (.username | length)}',
  '.a // "d"', '.a // .b // 3', '.flag // .n', 'select(.flag) // .username', '.a // .b | length', '.a or .b // "x"',
  'has("a")', 'has("")', 'select(has("flag")) | .flag', '.username | ascii_downcase', '.a | ascii_upcase', '{l: .username | ascii_downcase}', '{a: 1}', '{n: -3, m: .n}',
  // Strings with escapes and interpolations, arrays, tostring and formats.
  '"\\(.username)\\t\\(.n)"', '"a\\(.a // "-")b\\(.tags)c\\(.flag)"', '"\\(.user)"', '"x\\("y\\(.n)z")"', '"tab\\there\\n\\u00e9\\ud83d\\ude00\\/\\"\\\\"',
  '"\\(select(.flag))"', '[.username, .n, .a, .b, .flag] | @csv', '[.username, .n, .a, .b, .flag] | @tsv', '[.tags] | @csv', '.tags | @tsv', '[.a | length]',
  '[]', '[.a, select(.flag), .n]', '. | @json', '.username | @json', '.tags | tostring', '.n | tostring', '@text', '[.user] | tostring', '{u: .username} | @json',
];
// Not in the subset (jq runs them), valid or not.
const OTHER = ['', '..', '..a', '.a?', '.["a"]', '."a"', '.a, .b', '$x', '.a == .b == .c', '{a: .x == "y"}', '{if: .a}', '{(.a): 1}',
  'test("7$"; "x")', 'test("\\\\d")', 'test("a{2}")', 'test("a*b+")', 'test("[]")', 'test("(?i)a")', 'test("a**")', 'test("\\\\-")', 'split("_"; null)', 'split(.a)', '.a + "x"', '"\\(.a) \\(.a + 1)"', '.a # c', '.a\u00a0', '{"a"}', '.[:]', '.[0]', '{a, a}', 'not(.a)',
  '.a < .b < .c', '{a: .x // "y"}', 'length(.a)', 'has(.a)', 'has(0)', '00', '1.5', '1e3', '.n-1', '.n - 1', '1234567890123456', '.a ?// .b', '.a //= 1', 'ascii',
  '[.a | .b, .c]', '[.a, .b | .c]', '"\\(.a, .b)"', '"\\()"', '"\\(.a"', '"\\ud800"', '"a\\qb"', '"raw\ttab"', '@base64', '@csv "x"', '@sh', '{"\\(.a)": 1}', '"\\x"'];

const hostileString = fc.constantFrom(
  '""', '"kaneta_7"', '"x\\n"', '"7\\n"', '"a7\\n\\n"', '"\\ud800"', '"a\\udfff7"', '"😀7"', '"日本語テキスト7"', '"\\u007f"', '"\\u0000\\u001f\\b\\t"',
  '"quote\\"back\\\\slash"', '"/"', '"\\uffff"', '"\\ue000"', '"A"', '"a"', '"kaneta"', '"2026-11-24T18:00:00.000568+00:00"', '"😀😀😀😀😀😀😀😀😀😀😀"', '"ab-c"', '"x.y"', '"x.y\\n"', '"xzy"', '"\\u2028"',
  '"x\\n7"', '"7\\r"', '"a\\rb"', '"ka\\ne"', '"_a__b_"', '"_"', '"x.yx.y"', '"kaneta_77\\n"',
);
const hostileNumber = fc.constantFrom('0', '-1', '42', '9007199254740993', '12345678901234567890123', '1.0', '-0', '1e2', '0.1', '1.5', '123.4560000000000000001', '1E400');
const text: fc.Arbitrary<string> = fc.letrec((tie) => ({
  value: fc.oneof(
    { weight: 4, arbitrary: hostileString },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 6 }).map((s) => JSON.stringify(s)) },
    { weight: 2, arbitrary: fc.constantFrom('null', 'true', 'false') },
    hostileNumber,
    fc.array(tie('value'), { maxLength: 3 }).map((items) => `[${items.join(',')}]`),
    fc.constantFrom('{"b":"x","1":"y"}', '{"b":null,"c":{"d":"e"}}', '{"__proto__":"p","b":"q"}', '{"b":1,"b":"dup"}', '{"screen_name":"n"}', '{}'),
  ),
})).value as fc.Arbitrary<string>;
const FIELDS = ['username', 'last_checked', 'a', 'b', 'flag', 'n', 'tags', 'user', ''];
const record: fc.Arbitrary<JsonObject> = fc
  .array(fc.tuple(fc.constantFrom(...FIELDS), text), { maxLength: 6 })
  .map((pairs) => parseJson(`{${pairs.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`) as JsonObject);
// Records like the service's, which the subset must answer itself.
const plain = fc.record({ username: fc.string({ unit: 'grapheme', maxLength: 12 }), last_checked: fc.constantFrom('2026-11-24T18:00:00.000568+00:00', '2026-01-02T03:04:05Z'), a: fc.constantFrom('x', 'y', null), b: fc.boolean(), flag: fc.constantFrom(true, false, null), n: fc.integer({ min: -50, max: 50 }) }) as fc.Arbitrary<JsonObject>;

describe('--jq filters answered without jq (the subset)', () => {
  it('takes exactly the filters of its grammar, each one that jq compiles', async () => {
    const jq = await jqWasm;
    for (const filter of SUBSET) {
      expect(compileSubset(filter), filter).toBeDefined();
      expect(compileError(jq, { filter, flags: jqFlags() }), filter).toBeUndefined();
    }
    for (const filter of OTHER) expect(compileSubset(filter), filter).toBeUndefined();
  });

  it('answers records like the service sends, and leaves to jq what only jq knows', () => {
    const bench = compileSubset('select(.username | test("7$")) | {u: .username, t: .last_checked[0:10]}')!;
    const records = [{ username: 'kaneta_7', last_checked: '2026-11-24T18:00:00.000568+00:00' }, { username: 'b_8', last_checked: 'x' }];
    expect(subsetLines(records as JsonObject[], bench)).toBe('{"u":"kaneta_7","t":"2026-11-24"}\n');
    for (const value of ['1.0', '9007199254740993', '"\\ud800"', '{"1":"a"}', '0.5']) {
      expect(subsetLines([parseJson(`{"a":${value}}`) as JsonObject], compileSubset('.a')!), value).toBeUndefined();
    }
    expect(subsetLines([{ a: 'text' }] as JsonObject[], compileSubset('.a.b')!)).toBeUndefined(); // jq: cannot index string
  });

  it('prints what jq-wasm prints, byte for byte, errors and all, over hostile records and pages (fast-check)', async () => {
    let answered = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(fc.oneof(record, plain), { maxLength: 5 }), { maxLength: 3 }), fc.constantFrom(...SUBSET), async (pages, filter) => {
        if (pages.length > 0 && subsetLines(pages[0]!, compileSubset(filter)!) !== undefined) answered++;
        expect(await formatted(filter, pages)).toBe(await byJq(filter, pages));
      }),
      { numRuns: 600 },
    );
    expect(answered).toBeGreaterThan(80); // the comparison covers the subset's own answers, not only jq's
  }, 120_000);

  it('answers plain records of every filter of the subset exactly as jq does (fast-check)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(plain, { minLength: 1, maxLength: 8 }), fc.constantFrom(...SUBSET), async (page, filter) => {
        expect(await formatted(filter, [page])).toBe(await byJq(filter, [page]));
      }),
      { numRuns: 300 },
    );
  }, 120_000);
  it('takes only filters jq compiles, and answers them as jq does: random strings of the grammar\'s tokens (fast-check)', async () => {
    const jq = await jqWasm;
    const token = fc.constantFrom('.', '.a', '.n', '.username', '"x"', '"7"', '0', '1', '-1', 'null', 'true', 'not', 'length', 'ascii_upcase', 'has', 'select', 'test',
      'startswith', '(', ')', '{', '}', ':', ',', '|', '//', '==', '!=', '<', '>=', 'and', 'or', '[', ']', 'a', 'if',
      '"s\\(', ')t"', ')\\(', '"a\\tb"', '@csv', '@tsv', '@json', 'tostring');
    const page = [{ username: 'kaneta_7', n: 3, a: 'x' }, { username: 'Zoë', n: -1, a: null }, {}] as JsonObject[];
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(token, { minLength: 1, maxLength: 9 }), async (tokens) => {
        const filter = tokens.join(' ');
        if (compileSubset(filter) === undefined) return;
        accepted++;
        expect(compileError(jq, { filter, flags: jqFlags() }), filter).toBeUndefined();
        expect(await formatted(filter, [page]), filter).toBe(await byJq(filter, [page]));
      }),
      { numRuns: 4000 },
    );
    expect(accepted).toBeGreaterThan(100);
  }, 120_000);

  it('takes only regular expressions jq compiles, and matches them as jq does: random patterns over hostile strings (fast-check)', async () => {
    const jq = await jqWasm;
    const piece = fc.constantFrom('a', '7', '_', ' ', '-', '/', '.', '^', '$', '*', '+', '?', '|', '(', ')', '[', ']', '[^', 'a-z', '0-9', 'z-a', '\\.', '\\$', '\\/',
      '\\n', '\\d', '\\w', '{', '}', '{2}', '(?', 'é');
    const strings = ['', 'a', '7', 'a7', 'a7\n', '7\n\n', 'x\n7', 'a\rb', 'a\nb', 'a\u2028b', '😀', 'a😀7', '_a__b_', 'a.b', 'a/b', 'A-Z', 'aaaa7', '^$', 'é7', '٣'];
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(piece, { minLength: 1, maxLength: 7 }), async (pieces) => {
        const pattern = pieces.join('');
        const test = regexTest(pattern);
        const result = jq.raw(JSON.stringify(strings), `.[] | test(${JSON.stringify(pattern)})`, ['-c']);
        if (test === undefined) return;
        accepted++;
        expect(result.exitCode, `${pattern}: ${result.stderr}`).toBe(0);
        expect(strings.map((s) => String(test(s))).join('\n'), pattern).toBe(result.stdout);
      }),
      { numRuns: 3000 },
    );
    expect(accepted).toBeGreaterThan(300);
  }, 120_000);

  it('refuses a record like jq when a lone surrogate hides under the empty key', async () => {
    const pages = [[parseJson('{"":"\\ud800","username":"x"}') as JsonObject, { username: 'y' }]];
    expect(await formatted('.username', pages)).toBe(await byJq('.username', pages));
  });
});
