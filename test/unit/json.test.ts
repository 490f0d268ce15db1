import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RawNumber, keptTokens, parseJson, parseKept, parsedLosslessly, stringifyJson } from '../../src/core/json.js';
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

describe('parseKept: a text parsed again, given the tokens parseJson kept', () => {
  it('gives what parseJson gives, numbers kept as text alike, without scanning the text again', () => {
    const value: fc.Arbitrary<string> = fc.letrec<{ v: string }>((tie) => ({
      v: fc.oneof(
        { depthSize: 'small' },
        numberToken(25),
        fc.string().map((x) => JSON.stringify(x)),
        fc.constantFrom('true', 'null', '"\\u0000x"'),
        fc.array(tie('v'), { maxLength: 4 }).map((xs) => `[${xs.join(',')}]`),
        fc.dictionary(fc.string({ maxLength: 4 }), tie('v'), { maxKeys: 4 }).map((o) => `{${Object.entries(o).map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`),
      ),
    })).v;
    fc.assert(
      fc.property(value, (text) => {
        const once = parseJson(text);
        const again = parseKept(text, keptTokens(once) ?? []);
        expect(stringifyJson(again)).toBe(stringifyJson(once));
        expect(again).toEqual(once);
        expect(parsedLosslessly(again)).toBe(parsedLosslessly(once));
      }),
      { numRuns: 400 },
    );
    const page = '{"data":[{"id":1234567890123456789,"n":1.0}]}';
    expect(keptTokens(parseJson(page))).toEqual([15, 34, 39, 42]);
    expect(keptTokens(parseJson('{"id":1}'))).toBeUndefined();
  });
});
