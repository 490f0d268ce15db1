import { describe, expect, it } from 'vitest';
import { bigIntegersAsStrings } from '../../src/core/big-integers.js';
import { parseJson, stringifyJson, type Json } from '../../src/core/json.js';
import type { JsonObject } from '../../src/core/classify.js';

// --bigint-as-string: an integer past ±2^53 becomes a JSON string of its digits, for readers
// that read every number as a double (jq 1.6: …600000001 prints as …600000000).
const converted = (text: string) => stringifyJson(bigIntegersAsStrings(parseJson(text) as JsonObject) as Json);

describe('integers past ±2^53 as strings', () => {
  it('writes each as a string of the digits sent, at any depth; everything else as sent', () => {
    expect(converted('{"id":1353639155300000001,"n":6118,"s":"1353639155300000001"}')).toBe('{"id":"1353639155300000001","n":6118,"s":"1353639155300000001"}');
    expect(converted('{"a":[-9007199254740993,{"b":123456789012345678901234567890}],"c":{"d":18446744073709551617}}')).toBe(
      '{"a":["-9007199254740993",{"b":"123456789012345678901234567890"}],"c":{"d":"18446744073709551617"}}',
    );
  });

  it('2^53 and what is within it stay numbers; decimals, exponents, 1.0 and -0 are not integers to change', () => {
    const text = '{"max":9007199254740992,"min":-9007199254740992,"safe":9007199254740991,"x":1E400,"d":0.12345678901234567890123,"one":1.0,"nz":-0,"e":1e20}';
    expect(converted(text)).toBe(text);
  });

  it('a record with nothing to change is handed back as it is, and none is changed in place', () => {
    const plain = parseJson('{"id":5,"name":"a"}') as JsonObject;
    expect(bigIntegersAsStrings(plain)).toBe(plain);
    const big = parseJson('{"id":1353639155300000001,"list":[1,9007199254740993]}') as JsonObject;
    const before = stringifyJson(big);
    bigIntegersAsStrings(big);
    expect(stringifyJson(big)).toBe(before);
  });
});
