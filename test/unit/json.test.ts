import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RawNumber, keptInPlace, keptTokens, parseJson, parseKept, parsedLosslessly, stringifyJson, type Json, type KeptTokens } from '../../src/core/json.js';
import { scanNumbers } from '../../src/core/number-tokens.js';
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
