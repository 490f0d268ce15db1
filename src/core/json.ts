// Records must leave sgq exactly as the service sent them. JSON.parse rounds integers past
// 2^53 (a 19-digit account id would change), so a body holding such a number is parsed again
// by a small parser that keeps its text. Everything else takes the fast native path.

/** A number kept as the text the service sent, because a JS number would change it. */
export class RawNumber {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

export type Json = null | boolean | number | string | RawNumber | Json[] | { [key: string]: Json };

/**
 * The deepest nesting sgq reads. Everything after parsing (the lossless parser, the writers,
 * YAML's above all, which ran out of stack at some 600 levels) recurses once per level, so a
 * document is refused here, with a message, rather than by a stack overflow later. 256 is
 * jq 1.6's limit, and ten times more than any record of the service.
 */
export const MAX_JSON_DEPTH = 256;

/** A document nested deeper than MAX_JSON_DEPTH: valid JSON, but more than sgq reads. */
export class JsonTooDeep extends Error {
  constructor() {
    super(`JSON nested deeper than ${MAX_JSON_DEPTH} levels, the most sgq reads`);
    this.name = 'JsonTooDeep';
  }
}

/**
 * Whether JSON.parse produced an integer it could not hold exactly (cheaper than scanning the
 * text). The walk stops past MAX_JSON_DEPTH, so its own recursion stays bounded.
 */
function hasUnsafeInteger(value: unknown, depth = 0): boolean {
  if (typeof value === 'number') return Number.isInteger(value) && !Number.isSafeInteger(value);
  if (value === null || typeof value !== 'object') return false;
  if (++depth > MAX_JSON_DEPTH) throw new JsonTooDeep();
  let unsafe = false;
  // On to the end even after an unsafe integer: the whole document's depth is checked.
  if (Array.isArray(value)) {
    for (const item of value) if (hasUnsafeInteger(item, depth)) unsafe = true;
    return unsafe;
  }
  for (const key in value) if (hasUnsafeInteger((value as Record<string, unknown>)[key], depth)) unsafe = true;
  return unsafe;
}

// Documents that needed the slow parser; everything from any other can use JSON.stringify.
const losslessDocuments = new WeakSet<object>();

/** Parses JSON text, keeping integers past 2^53 exact; throws JsonTooDeep past MAX_JSON_DEPTH. */
export function parseJson(text: string): Json {
  const fast = JSON.parse(text) as Json;
  if (!hasUnsafeInteger(fast)) return fast;
  const value = new LosslessParser(text).parseDocument();
  if (value !== null && typeof value === 'object') losslessDocuments.add(value);
  return value;
}

/** Whether `parseJson` had to keep numbers as text in this document. */
export const parsedLosslessly = (document: Json): boolean => document !== null && typeof document === 'object' && losslessDocuments.has(document);

/** JSON text of a value, writing RawNumbers as they were received. */
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
