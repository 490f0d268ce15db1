import { describe, expect, it } from 'vitest';
import { RawNumber, parseJson, stringifyJson } from '../../src/core/json.js';

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
