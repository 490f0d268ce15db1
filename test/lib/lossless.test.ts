import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { numberToken as anyNumberToken } from '../helpers/number-tokens.js';
import { LosslessNumber, parseJson, stringifyJson, type SgqValue } from '../../src/lib.js';

// RFC 8259 §6: number = [ minus ] int [ frac ] [ exp ]; int = zero / ( digit1-9 *DIGIT ).
const numberToken = anyNumberToken(40);

// Documents whose number tokens sit in arrays and objects, beside strings of any code units.
const documentText = fc
  .uniqueArray(fc.tuple(fc.string({ maxLength: 8 }), fc.oneof(numberToken, fc.string({ unit: 'binary', maxLength: 12 }).map((s) => JSON.stringify(s)), numberToken.map((t) => `[${t},{"n":${t}}]`))), { minLength: 1, maxLength: 6, selector: ([k]) => k })
  // Keys start with a letter: a JS object (JSON.parse's too) puts integer-like keys first.
  .map((pairs) => `{${pairs.map(([k, v]) => `${JSON.stringify(`k${k}`)}:${v}`).join(',')}}`);

describe('parseJson and stringifyJson from sgq', () => {
  it('round-trip every number token of RFC 8259 exactly', () => {
    fc.assert(
      fc.property(numberToken, (token) => {
        expect(stringifyJson(parseJson(token))).toBe(token);
      }),
      { numRuns: 2000 },
    );
  });

  it('round-trip documents of numbers and strings: the text JSON.stringify would write, with every token as sent', () => {
    fc.assert(
      fc.property(documentText, (text) => {
        const out = stringifyJson(parseJson(text));
        // Strings and keys are written as JSON.stringify writes them; numbers are untouched.
        const canonical = text.replace(/"(?:[^"\\]|\\.)*"/g, (s) => JSON.stringify(JSON.parse(s)));
        expect(out).toBe(canonical);
        expect(parseJson(out)).toEqual(parseJson(text));
      }),
      { numRuns: 500 },
    );
  });

  it('hands out every integer past 2^53 as the BigInt of its digits, also one whose double prints the same', () => {
    // 1234567890123456800 is a double that prints as sent, while its value is …768: another id.
    const value = parseJson('{"a":1234567890123456800,"b":-1000000000000000000,"c":9007199254740993,"safe":9007199254740991}') as Record<string, SgqValue>;
    expect(value).toEqual({ a: 1234567890123456800n, b: -1000000000000000000n, c: 9007199254740993n, safe: 9007199254740991 });
  });

  it('hands out integers past 2^53 as BigInts and other changed tokens as LosslessNumbers', () => {
    const value = parseJson('{"id":12345678901234567890,"small":42,"score":0.12345678901234567890123,"one":1.0,"neg":-0,"huge":1E400}') as Record<string, SgqValue>;
    expect(value.id).toBe(12345678901234567890n);
    expect(value.small).toBe(42);
    for (const [name, text] of [['score', '0.12345678901234567890123'], ['one', '1.0'], ['neg', '-0'], ['huge', '1E400']] as const) {
      const n = value[name];
      expect(n).toBeInstanceOf(LosslessNumber);
      expect((n as LosslessNumber).text).toBe(text);
      expect(String(n)).toBe(text);
      expect(+(n as LosslessNumber)).toBe(Number(text));
    }
    expect(Object.is(+(value.neg as LosslessNumber), -0)).toBe(true);
    expect(stringifyJson(value)).toBe('{"id":12345678901234567890,"small":42,"score":0.12345678901234567890123,"one":1.0,"neg":-0,"huge":1E400}');
  });

  it('writes BigInts made by a program, leaves out undefined fields, and keeps a __proto__ key a key', () => {
    expect(stringifyJson({ a: 2n ** 70n, b: [1n, -3n] })).toBe('{"a":1180591620717411303424,"b":[1,-3]}');
    expect(stringifyJson({ a: 1, b: undefined } as unknown as SgqValue)).toBe('{"a":1}');
    const proto = parseJson('{"__proto__":{"x":1},"n":1E400}');
    expect(Object.keys(proto as object)).toEqual(['__proto__', 'n']);
    expect(stringifyJson(proto)).toBe('{"__proto__":{"x":1},"n":1E400}');
  });

  it('throws a SyntaxError on text that is not JSON', () => {
    expect(() => parseJson('{"a":')).toThrow(SyntaxError);
  });
});
