// Records must leave sgq exactly as the service sent them. JSON.parse rounds integers past
// 2^53 (a 19-digit account id would change), so bodies holding such a number are read by
// a small parser that keeps its text. Everything else takes the fast native path.

/** A number kept as the text the service sent, because a JS number would change it. */
export class RawNumber {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

export type Json = null | boolean | number | string | RawNumber | Json[] | { [key: string]: Json };

// A run of 16 or more digits where a value may start: the only place precision can be lost.
const LONG_NUMBER = /[:,[]\s*-?\d{16}/;

export function parseJson(text: string): Json {
  if (!LONG_NUMBER.test(text)) return JSON.parse(text) as Json;
  return new LosslessParser(text).parseDocument();
}

export function stringifyJson(value: Json): string {
  return containsRaw(value) ? stringifyLossless(value) : JSON.stringify(value);
}

function containsRaw(value: Json): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (value instanceof RawNumber) return true;
  if (Array.isArray(value)) return value.some(containsRaw);
  for (const key in value) if (containsRaw(value[key]!)) return true;
  return false;
}

function stringifyLossless(value: Json): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (value instanceof RawNumber) return value.text;
  if (Array.isArray(value)) return `[${value.map(stringifyLossless).join(',')}]`;
  let out = '';
  for (const key of Object.keys(value)) {
    const item = value[key];
    if (item === undefined) continue;
    out += `${out ? ',' : ''}${JSON.stringify(key)}:${stringifyLossless(item)}`;
  }
  return `{${out}}`;
}

class LosslessParser {
  private pos = 0;
  constructor(private readonly text: string) {}

  parseDocument(): Json {
    const value = this.value();
    this.space();
    if (this.pos !== this.text.length) this.fail('unexpected text after the JSON value');
    return value;
  }

  private fail(what: string): never {
    throw new SyntaxError(`${what} at position ${this.pos}`);
  }

  private space(): void {
    while (this.pos < this.text.length && ' \t\n\r'.includes(this.text[this.pos]!)) this.pos++;
  }

  private value(): Json {
    this.space();
    const c = this.text[this.pos];
    if (c === '{') return this.object();
    if (c === '[') return this.array();
    if (c === '"') return this.string();
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return this.number();
    for (const [word, value] of [['true', true], ['false', false], ['null', null]] as const) {
      if (this.text.startsWith(word, this.pos)) {
        this.pos += word.length;
        return value;
      }
    }
    return this.fail(c === undefined ? 'unexpected end of JSON' : `unexpected character ${JSON.stringify(c)}`);
  }

  private object(): Json {
    const result: Record<string, Json> = {};
    this.pos++;
    this.space();
    if (this.text[this.pos] === '}') {
      this.pos++;
      return result;
    }
    for (;;) {
      this.space();
      if (this.text[this.pos] !== '"') this.fail('expected a property name');
      const key = this.string();
      this.space();
      if (this.text[this.pos++] !== ':') this.fail('expected ":"');
      result[key] = this.value();
      this.space();
      const c = this.text[this.pos++];
      if (c === '}') return result;
      if (c !== ',') this.fail('expected "," or "}"');
    }
  }

  private array(): Json {
    const result: Json[] = [];
    this.pos++;
    this.space();
    if (this.text[this.pos] === ']') {
      this.pos++;
      return result;
    }
    for (;;) {
      result.push(this.value());
      this.space();
      const c = this.text[this.pos++];
      if (c === ']') return result;
      if (c !== ',') this.fail('expected "," or "]"');
    }
  }

  private string(): string {
    const start = this.pos;
    this.pos++;
    for (;;) {
      const c = this.text[this.pos++];
      if (c === undefined) this.fail('unterminated string');
      if (c === '\\') this.pos++;
      else if (c === '"') break;
    }
    // The native parser validates escapes and decodes them.
    return JSON.parse(this.text.slice(start, this.pos)) as string;
  }

  private number(): Json {
    const match = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(this.text.slice(this.pos, this.pos + 400));
    if (!match) return this.fail('invalid number');
    this.pos += match[0].length;
    const value = Number(match[0]);
    return String(value) === match[0] ? value : new RawNumber(match[0]);
  }
}
