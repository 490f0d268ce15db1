import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JsonTooDeep, MAX_JSON_DEPTH, RawNumber, keptInPlace, keptTokens, parseJson, parseJsonCold, parseKept, parsedLosslessly, stringifyJson, stringifyJsonCold, type Json, type KeptTokens } from '../../src/core/json.js';
import { findNumbers, scanNumbers } from '../../src/core/number-tokens.js';
import { numberToken } from '../helpers/number-tokens.js';

describe('lossless JSON', () => {
  it('keeps integers past 2^53 exactly as sent', () => {
    const text = '{"data":[{"id":1234567890123456789,"name":"a"}],"n":1.5}';
    const value = parseJson(text) as { data: { id: RawNumber }[] };
    expect(value.data[0]!.id).toBeInstanceOf(RawNumber);
    expect(stringifyJson(value)).toBe(text);
  });

  it('keeps numeric-looking strings as strings', () => {
    const text = '{"id":"1234567890123456789","zero":"007"}';
    expect(stringifyJson(parseJson(text))).toBe(text);
  });

  it('parses nested values, escapes and literals in the slow path, numbers as written', () => {
    const text = '{"big":12345678901234567890,"s":"a\\"b\\u00e9\\n","a":[true,false,null,{"x":-1e5}],"e":{}}';
    const value = parseJson(text) as Record<string, unknown>;
    expect(value.s).toBe('a"bé\n');
    expect(stringifyJson(value as never)).toBe('{"big":12345678901234567890,"s":"a\\"bé\\n","a":[true,false,null,{"x":-1e5}],"e":{}}');
  });

  it.each(['{"a":12345678901234567', '{"a":12345678901234567,}', '[1234567890123456789 1]', '{"a":12345678901234567}x'])('rejects malformed %j', (bad) => {
    expect(() => parseJson(bad)).toThrow(SyntaxError);
  });
});

/** JSON text of any shape: numbers of every form, strings, objects whose keys may repeat or be array indices. */
const jsonText: fc.Arbitrary<string> = fc.letrec<{ v: string }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    numberToken(25),
    fc.string().map((x) => JSON.stringify(x)),
    fc.constantFrom('true', 'null', '"\\u0000x"'),
    fc.array(tie('v'), { maxLength: 4 }).map((xs) => `[${xs.join(',')}]`),
    fc.dictionary(fc.string({ maxLength: 4 }), tie('v'), { maxKeys: 4 }).map((o) => `{${Object.entries(o).map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`),
    // Keys that repeat (JSON.parse keeps the last value, in the first one's place) and keys that are array indices (listed first).
    fc.array(fc.tuple(fc.constantFrom('a', 'b', '0', '7', '10', '01', '__proto__', 'é'), tie('v')), { maxLength: 4 }).map((pairs) => `{${pairs.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`),
  ),
})).v;

/** What parseJson gave before it put kept tokens in place: the text parsed with each kept token marked as a string. */
function markedParse(text: string): Json {
  const { inexact } = scanNumbers(text);
  let marked = '';
  let at = 0;
  for (let k = 0; k < inexact.length; k += 2) {
    marked += `${text.slice(at, inexact[k])}"\\u0000${text.slice(inexact[k], inexact[k + 1])}"`;
    at = inexact[k + 1]!;
  }
  const unmark = (value: Json): Json => {
    if (typeof value === 'string') return value.charCodeAt(0) === 0 ? new RawNumber(value.slice(1)) : value;
    if (value === null || typeof value !== 'object') return value;
    for (const key of Object.keys(value)) (value as Record<string, Json>)[key] = unmark((value as Record<string, Json>)[key]!);
    return value;
  };
  return unmark(JSON.parse(marked + text.slice(at)) as Json);
}

const NONE: KeptTokens = { inexact: [], ordinals: [], numbers: 0, members: 0 };

describe('parseKept: a text parsed again, given the tokens parseJson kept', () => {
  it('gives what parseJson gives, numbers kept as text alike, without scanning the text again', () => {
    fc.assert(
      fc.property(jsonText, (text) => {
        const once = parseJson(text);
        const again = parseKept(text, keptTokens(once) ?? NONE);
        expect(stringifyJson(again)).toBe(stringifyJson(once));
        expect(again).toEqual(once);
        expect(parsedLosslessly(again)).toBe(parsedLosslessly(once));
      }),
      { numRuns: 400 },
    );
    const page = '{"data":[{"id":1234567890123456789,"n":1.0}]}';
    expect(keptTokens(parseJson(page))).toEqual({ inexact: [15, 34, 39, 42], ordinals: [0, 1], numbers: 2, members: 3 });
    expect(keptTokens(parseJson('{"id":1}'))).toBeUndefined();
  });

  it('property: the kept tokens put in place give what parsing the marked text gave, whatever the keys', () => {
    fc.assert(
      fc.property(jsonText, (text) => {
        // A string starting with U+0000 would read as a mark: such a text goes to the careful parser, compared in the test above.
        fc.pre(!text.includes('\\u0000'));
        expect(parseJson(text)).toEqual(markedParse(text));
      }),
      { numRuns: 1000 },
    );
  });

  it('puts the tokens in place in the text\'s order, and gives up where JSON.parse\'s order may not be the text\'s', () => {
    const put = (text: string) => {
      const { inexact, ordinals, numbers, members } = scanNumbers(text);
      return keptInPlace(text, JSON.parse(text) as Json, { inexact, ordinals, numbers, members });
    };
    expect(put('{"a":[1,12345678901234567891,{"b":2.50}],"c":-0}')).toEqual({ a: [1, new RawNumber('12345678901234567891'), { b: new RawNumber('2.50') }], c: new RawNumber('-0') });
    // An array index is listed first: the walk would meet …891 first.
    expect(put('{"b":12345678901234567890,"1":12345678901234567891}')).toBeUndefined();
    // The same key twice: the last value in the first one's place.
    expect(put('{"a":"x","b":12345678901234567891,"a":12345678901234567890}')).toBeUndefined();
    expect(stringifyJson(parseJson('{"b":12345678901234567890,"1":12345678901234567891}'))).toBe('{"1":12345678901234567891,"b":12345678901234567890}');
    expect(stringifyJson(parseJson('{"a":"x","b":12345678901234567891,"a":12345678901234567890}'))).toBe('{"a":12345678901234567890,"b":12345678901234567891}');
  });
});

// The first page of a process is read and written on the engine's own code (json.ts): the same
// values and the same text as the ways that take over once warm, which the tests above use.
describe('the first page of a process: the engine\'s regular expressions, JSON.parse and JSON.stringify with marks', () => {
  // Whitespace after any punctuation outside strings, as a service may send it.
  const spaced = (text: string) => text.replace(/"(?:[^"\\]|\\.)*"|[,:[\]{}]/g, (m) => (m.length === 1 ? `${m} \n\t` : m));

  it('property: findNumbers finds the tokens to keep and the depth that the loop finds', () => {
    fc.assert(
      fc.property(jsonText, fc.boolean(), (text, space) => {
        const t = space ? spaced(text) : text;
        const { inexact, depth } = scanNumbers(t);
        expect(findNumbers(t)).toEqual({ inexact, depth });
      }),
      { numRuns: 2000 },
    );
  });

  it('property: parseJsonCold gives the value, the kept tokens\' text and the errors that parseJson gives', () => {
    fc.assert(
      fc.property(jsonText, fc.boolean(), (text, space) => {
        const t = space ? spaced(text) : text;
        const cold = parseJsonCold(t);
        expect(cold).toEqual(parseJson(t));
        expect(stringifyJson(cold)).toBe(stringifyJson(parseJson(t)));
        expect(parsedLosslessly(cold)).toBe(parsedLosslessly(parseJson(t)));
        // What the dataset's thread gets: the text parsed again with these kept tokens.
        expect(parseKept(t, keptTokens(cold) ?? NONE)).toEqual(cold);
      }),
      { numRuns: 1000 },
    );
    const bad = ['{"a":1.0.0}', '{1.0:2}', '{12345678901234567890:1}', '{"a":{-0:1}}', '[{"a":1},{1E400:2}]', '[01]', '[1.]', '[-]', '{"a":1.0', '[1.0 2]', '"\\u0000', '1.0x'];
    for (const text of bad) expect(() => parseJsonCold(text), text).toThrow(SyntaxError);
    const deep = (n: number) => `${'['.repeat(n)}1.0${']'.repeat(n)}`;
    expect(stringifyJson(parseJsonCold(deep(MAX_JSON_DEPTH)))).toBe(deep(MAX_JSON_DEPTH));
    expect(() => parseJsonCold(deep(MAX_JSON_DEPTH + 1))).toThrow(JsonTooDeep);
    expect(() => parseJsonCold(`${deep(MAX_JSON_DEPTH + 1)},`)).toThrow(SyntaxError);
  });

  it('past 512 skipped parts (one call of the expression) many times over, and strings that hold escapes, quotes, brackets and digits', () => {
    const many = `[${Array.from({ length: 10_000 }, (_, i) => `{"s":"a\\"b[{1.0","n":${i},"m":-${i}}`).join(',')},1.0,-0,12345678901234567890]`;
    const { inexact, depth } = scanNumbers(many);
    expect(findNumbers(many)).toEqual({ inexact, depth });
    // -0 (the first record's "m"), 1.0, -0, and the 20-digit integer.
    expect(inexact.length).toBe(8);
    expect(depth).toBe(2);
  });

  it('a string of millions of escapes overflows the engine\'s backtrack stack: that text is scanned by the loop', () => {
    const text = `{"s":"${'\\n'.repeat(8_000_000)}","n":1.0,"a":[[2]]}`;
    // The premise: that string is past what the engine holds (Node 20 to 26).
    expect(() => text.replace(/"[^"\\]*(?:\\.[^"\\]*)*"/g, '')).toThrow(RangeError);
    expect(findNumbers(text)).toEqual(scanNumbers(text));
    expect(stringifyJson(parseJsonCold(text))).toBe(text);
  });

  it('a number token of any length, beside a string that sends the body to the slow parser', () => {
    // Real bodies: a decimal written to 600 places, an id of 1,000 digits (as they were sent).
    const long = `0.${'1234567890'.repeat(60)}`;
    const huge = '9'.repeat(1000);
    const text = `{"s":"\\u0000","x":${long},"id":${huge},"n":-${long}e-7}`;
    const value = parseJsonCold(text) as Record<string, unknown>;
    expect(value.x).toEqual(new RawNumber(long));
    expect(value.id).toEqual(new RawNumber(huge));
    expect(stringifyJson(value as Json)).toBe(text);
    expect(stringifyJson(parseJson(text))).toBe(text);
  });

  it('property: stringifyJsonCold writes what stringifyJson writes', () => {
    fc.assert(
      fc.property(jsonText, (text) => {
        const value = parseJson(text);
        expect(stringifyJsonCold(value)).toBe(stringifyJson(value));
      }),
      { numRuns: 1000 },
    );
  });

  it('a string or key that starts with U+0000 beside kept tokens is written exactly, by hand', () => {
    const value = { '\u00001': new RawNumber('1.0'), s: '\u000012', t: 'x\u0000"1"', n: new RawNumber('-0') } as Json;
    const text = '{"\\u00001":1.0,"s":"\\u000012","t":"x\\u0000\\"1\\"","n":-0}';
    expect(stringifyJsonCold(value)).toBe(text);
    expect(stringifyJson(value)).toBe(text);
    expect(stringifyJsonCold([new RawNumber('1E400'), 1, 'a', { a: [new RawNumber('12345678901234567890')] }])).toBe('[1E400,1,"a",{"a":[12345678901234567890]}]');
  });

  it('leaves JSON.stringify of a RawNumber (a LosslessNumber of the library) outside sgq\'s writer as it was: its fields', () => {
    expect(JSON.stringify({ n: new RawNumber('1.0') })).toBe('{"n":{"text":"1.0"}}');
  });
});
