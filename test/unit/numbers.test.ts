import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createFormatter, type Format } from '../../src/cli/formats/formats.js';
import { projection } from '../../src/cli/formats/fields.js';
import { decimalOf, decimalShape, doubleKeeps, integerOf, unscaled } from '../../src/parquet/numbers.js';
import type { JsonObject } from '../../src/core/classify.js';
import { JsonTooDeep, MAX_JSON_DEPTH, RawNumber, parseJson, parsedLosslessly, stringifyJson } from '../../src/core/json.js';
import { printsBack, scanNumbers } from '../../src/core/number-tokens.js';
import { captureSink } from '../helpers/sink.js';
import { digits, numberToken as anyNumberToken } from '../helpers/number-tokens.js';

// Every number token RFC 8259 allows: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
const numberToken = anyNumberToken(30, digits(1, 4));

// Strings that look like numbers or hold the characters the scan must not be fooled by.
const trickyString = fc.oneof(
  fc.constantFrom('2024-01-01T12:34:56.789Z', '12:30:00.5', '"1.0"', 'a\\"1.0', 'x: 1.0, y', '\\', '-0', '1E400', '[1.0]'),
  fc.string({ maxLength: 12 }),
  numberToken,
);

/** A record's text, built by hand so that its number tokens are exactly as generated. */
const recordText = fc
  .array(fc.tuple(fc.string({ maxLength: 6 }), fc.oneof(numberToken, trickyString.map((s) => JSON.stringify(s)), numberToken.map((t) => `[${t},{"n":${t}}]`))), { minLength: 1, maxLength: 6 })
  .map((pairs) => {
    const seen = new Set<string>();
    const unique = pairs.filter(([k]) => !seen.has(k) && seen.add(k) !== undefined && !/^\d+$/.test(k));
    return `{${unique.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`;
  })
  .filter((text) => text !== '{}');

const compact = (text: string) => JSON.stringify(JSON.parse(text.replace(/\d+(\.\d+)?([eE][+-]?\d+)?/g, '0')));

async function render(format: Format, records: JsonObject[], lossless: boolean, fields?: string[]): Promise<string> {
  const sink = captureSink();
  const f = await createFormatter(format, sink, { fields });
  f.write(records, lossless);
  f.end();
  return sink.text;
}

describe('numbers exactly as sent: parse', () => {
  it.each(['0.12345678901234567890123', '1E400', '-1E400', '1E-7', '2E+3', '1.0', '-0', '-0.0', '0.10', '12345678901234567890123', '9007199254740993', '1e400', '4.9e-400'])(
    'keeps %s as sent, alone and in a record with nothing else unusual',
    (token) => {
      const text = `{"username":"a","last_checked":"2024-01-01T12:34:56.789Z","n":${token},"list":[${token}]}`;
      const value = parseJson(text) as Record<string, Json>;
      expect(value.n).toEqual(new RawNumber(token));
      expect(parsedLosslessly(value)).toBe(true);
      expect(stringifyJson(value)).toBe(text);
      expect(stringifyJson(parseJson(token))).toBe(token);
    },
  );

  it('leaves numbers JSON.parse keeps as JS numbers, and such a page unmarked', () => {
    const text = '{"data":[{"u":"x:1.0,","t":"2024-01-01T12:34:56.789+00:00","n":1.5,"m":-3,"k":1e-7,"big":900719925474099,"z":0}],"note":"a\\"-0\\\\"}';
    const value = parseJson(text) as Record<string, Json>;
    expect(parsedLosslessly(value)).toBe(false);
    expect(value).toEqual(JSON.parse(text));
  });

  it('still refuses what is nested too deep, and what is not JSON', () => {
    const deep = (n: number) => `${'['.repeat(n)}1${']'.repeat(n)}`;
    expect(() => parseJson(deep(MAX_JSON_DEPTH))).not.toThrow();
    expect(() => parseJson(deep(MAX_JSON_DEPTH + 1))).toThrow(JsonTooDeep);
    expect(() => parseJson(`{"a":"${'['.repeat(400)}"}`)).not.toThrow();
    for (const bad of ['{"a":1.0.0}', '{1.0:2}', '[01]', '[1.]', '[-]', '{"a":1.0']) expect(() => parseJson(bad), bad).toThrow(SyntaxError);
  });

  it('a string that starts with U+0000 takes the careful parser and writer, and stays a string', () => {
    const text = '{"s":"\\u00001.0","n":1.0,"t":"a\\"\\u00002"}';
    const value = parseJson(text) as Record<string, Json>;
    expect(value.s).toBe('\u00001.0');
    expect(value.n).toEqual(new RawNumber('1.0'));
    expect(stringifyJson(value)).toBe(text);
    expect(stringifyJson({ s: '\u00003', n: new RawNumber('1.0') })).toBe('{"s":"\\u00003","n":1.0}');
  });

  it('scans past escaped quotes and counts depth outside strings only', () => {
    const text = '{"a":"\\\\","b":"\\"[[{1.0","c":[[1.0]]}';
    const scan = scanNumbers(text);
    expect(scan.depth).toBe(3);
    expect(scan.inexact.length).toBe(2);
    expect(text.slice(scan.inexact[0], scan.inexact[1])).toBe('1.0');
    expect(printsBack('1.5')).toBe(true);
    expect(printsBack('1.50')).toBe(false);
  });

  it('property: every RFC 8259 number token, anywhere in a record, comes back as sent', () => {
    fc.assert(
      fc.property(recordText, (text) => {
        const value = parseJson(text);
        expect(stringifyJson(value)).toBe(text);
        // What is not a number is what JSON.parse makes of it.
        expect(compact(stringifyJson(value))).toBe(compact(text));
      }),
      { numRuns: 500 },
    );
  });
});

type Json = Parameters<typeof stringifyJson>[0];

describe('numbers exactly as sent: writers', () => {
  const sent = '{"id":12345678901234567890123,"score":0.12345678901234567890123,"big":1E400,"one":1.0,"nz":-0,"e":2E+3,"f":1e-7,"s":"1.0","nested":{"x":[1.50]}}';
  const records = () => [parseJson(sent) as JsonObject];

  it('ndjson and json write the record as sent', async () => {
    expect(await render('ndjson', records(), true)).toBe(`${sent}\n`);
    expect(await render('json', records(), true)).toBe(`[\n${sent}\n]\n`);
  });

  it('csv and tsv write each number token as sent', async () => {
    const cells = '12345678901234567890123,0.12345678901234567890123,1E400,1.0,-0,2E+3,1e-7,1.0,"{""x"":[1.50]}"';
    expect((await render('csv', records(), true)).split('\r\n')[1]).toBe(cells);
    expect((await render('tsv', records(), true)).split('\n')[1]).toBe('12345678901234567890123\t0.12345678901234567890123\t1E400\t1.0\t-0\t2E+3\t1e-7\t1.0\t{"x":[1.50]}');
  });

  it('--fields keeps them, nested paths too', async () => {
    expect(await render('ndjson', records(), true, ['big', 'nested.x', 'nz'])).toBe('{"big":1E400,"nested.x":[1.50],"nz":-0}\n');
    expect(projection(['one']).project(records()[0]!)).toEqual({ one: new RawNumber('1.0') });
  });

  it('property: each writer gives every number token back as sent', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(numberToken, { minLength: 1, maxLength: 5 }), async (tokens) => {
        const text = `{${tokens.map((t, i) => `"k${i}":${t}`).join(',')}}`;
        const value = parseJson(text) as JsonObject;
        const lossless = parsedLosslessly(value);
        expect(await render('ndjson', [value], lossless)).toBe(`${text}\n`);
        expect(await render('json', [value], lossless)).toBe(`[\n${text}\n]\n`);
        expect((await render('csv', [value], lossless)).split('\r\n')[1]).toBe(tokens.join(','));
        expect((await render('tsv', [value], lossless)).split('\n')[1]).toBe(tokens.join('\t'));
      }),
      { numRuns: 300 },
    );
  });
});

describe('numbers in Parquet', () => {
  it('reads a token as a decimal value', () => {
    expect(decimalOf('-1.2300E+2')).toEqual({ negative: true, digits: '123', exponent: 0 });
    expect(decimalOf('0.000')).toEqual({ negative: false, digits: '', exponent: 0 });
    expect(decimalOf('-0')).toEqual({ negative: false, digits: '', exponent: 0 });
    expect(decimalOf('12e-1')).toEqual({ negative: false, digits: '12', exponent: -1 });
  });

  it('a double keeps 1.0, 2E+3, 1e-7, -0 and 0.10, not 1E400 or 23 significant digits', () => {
    for (const kept of ['1.0', '2E+3', '1e-7', '-0', '0.10', '1.5']) expect(doubleKeeps(kept), kept).toBe(true);
    for (const changed of ['1E400', '0.12345678901234567890123', '9007199254740993', '4.9e-400']) expect(doubleKeeps(changed), changed).toBe(false);
  });

  it('integers and DECIMAL digits', () => {
    expect(integerOf('2E+3')).toBe(2000n);
    expect(integerOf('-1.0')).toBe(-1n);
    expect(integerOf('1.5')).toBeUndefined();
    // A plain integer, read at once, is the decimal's integer: ids, -0, leading zeros (not JSON) and beyond 19 digits alike.
    for (const text of ['0', '-0', '1234567890123456789', '-9223372036854775808', '99999999999999999999', '007', '1e2']) {
      const d = decimalOf(text)!;
      const n = BigInt(d.digits === '' ? '0' : d.digits + '0'.repeat(d.exponent));
      expect(integerOf(text)).toBe(d.negative ? -n : n);
    }
    expect(decimalShape('-12.340')).toEqual({ whole: 2, scale: 2 });
    expect(decimalShape('1E400')).toBeUndefined();
    expect(unscaled('-12.34', 4)).toBe(-123400n);
    expect(unscaled('1.5E-3', 5)).toBe(150n);
  });
});

describe('numbers exactly as sent: odd documents', () => {
  it('a __proto__ key stays a key, on either path', () => {
    for (const text of ['{"__proto__":{"n":1.0},"m":2.50}', '{"__proto__":{"n":1.0},"s":"\\u0000"}']) {
      const value = parseJson(text) as Record<string, Json>;
      expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
      expect(Object.keys(value)[0]).toBe('__proto__');
      expect(stringifyJson(value)).toBe(text);
    }
  });
});
