// Records must leave sgq exactly as the service sent them. JSON.parse changes some number
// tokens (`1.0` becomes 1, `-0` 0, `1E400` Infinity; integers past 2^53 and long decimals are
// rounded), so each such token is kept as a RawNumber holding its text. Finding them costs one
// pass over the text that skips strings natively (number-tokens.ts, less than JSON.parse
// itself costs, and it replaces the walk that checked the depth); a page without them is what
// JSON.parse made of it.
//
// The first page of a process is read and written another way, on the engine's own code
// (regular expressions, JSON.parse and JSON.stringify with marks): a one-page command runs
// this code once, before V8 has compiled any of it, where a loop or a walk by hand costs ten
// times what the engine's code does; once warm, the hand-written ways cost half as much.

import { NUMBER_TOKEN, findNumbers, scanNumbers, type NumberScan, type NumberWalk } from './number-tokens.js';

/** A number kept as the text the service sent, because a JS number would change it. */
export class RawNumber {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
  /** Inside stringifyJson's first values, its mark (see there); anywhere else what JSON.stringify wrote before it had one: its fields. */
  toJSON(): string | { text: string } {
    if (!marking) return { text: this.text };
    marksWritten++;
    return `\u0000${this.text}`;
  }
}

// While stringifyJson runs JSON.stringify with marks, and how many RawNumbers it wrote as marks.
let marking = false;
let marksWritten = 0;

export type Json = null | boolean | number | string | RawNumber | Json[] | { [key: string]: Json };

/**
 * The JS number of a JSON number, also one kept as text (a balance sent as `997.0`); undefined
 * for anything else, and for a number past the double range (`1e400`), which no count, page
 * or balance can be. For the numbers sgq itself reads (pages, balances), never for output.
 */
export function numberValue(value: Json | undefined): number | undefined {
  const n = typeof value === 'number' ? value : value instanceof RawNumber ? Number(value.text) : undefined;
  return n !== undefined && Number.isFinite(n) ? n : undefined;
}

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
 * Turns each marked string (a number token wrapped in quotes, see `marked`) back into a
 * RawNumber. A key that starts with U+0000 was a number where JSON has a key: not JSON.
 */
function unmark(value: Json): Json {
  if (typeof value === 'string') return value.charCodeAt(0) === 0 ? new RawNumber(value.slice(1)) : value;
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = unmark(value[i]!);
    return value;
  }
  const object = value as Record<string, Json>;
  // Object.keys, and only into what may hold a mark: a third of the cost of a for-in over every member.
  const keys = Object.keys(object);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if (key.charCodeAt(0) === 0) throw new SyntaxError('a number where JSON has a key');
    const item = object[key]!;
    if (typeof item === 'string' ? item.charCodeAt(0) === 0 : item !== null && typeof item === 'object') object[key] = unmark(item);
  }
  return value;
}

/**
 * Where parseJson found the number tokens it kept as text (number-tokens.ts NumberScan), and
 * where a walk meets them when the loop counted that (NumberWalk): for whoever parses the same
 * text again (the dataset's thread gets a page's text with them).
 */
export type KeptTokens = Pick<NumberScan, 'inexact'> & Partial<Pick<NumberWalk, 'ordinals' | 'numbers' | 'members'>>;

// Documents that hold RawNumbers, each with the tokens kept as text (see `keptTokens`);
// everything from any other can use JSON.stringify.
const losslessDocuments = new WeakMap<object, KeptTokens>();

// A number token to keep is wrapped as a string that starts with U+0000, which no string of
// the text can do unless the text holds the escape `\u0000` (then the careful parser runs).
const MARK = '"\\u0000';

// Whether parseJson has read a text in this process (see the top of this file).
let parsedBefore = false;

/** Parses JSON text, keeping every number token JSON.parse would change; throws JsonTooDeep past MAX_JSON_DEPTH. */
export function parseJson(text: string): Json {
  if (!parsedBefore) {
    parsedBefore = true;
    return parseJsonCold(text);
  }
  return parsedAfterScan(text, scanNumbers(text));
}

/** parseJson the way of a process whose JavaScript has not warmed up: the tokens found by the regular expression engine. */
export const parseJsonCold = (text: string): Json => parsedAfterScan(text, findNumbers(text));

function parsedAfterScan(text: string, scan: NumberScan | NumberWalk): Json {
  if (scan.depth > MAX_JSON_DEPTH) {
    // A text that is not JSON says so first, deep or not.
    JSON.parse(text);
    throw new JsonTooDeep();
  }
  if (scan.inexact.length === 0) return JSON.parse(text) as Json;
  const { inexact, ordinals, numbers, members } = scan as Partial<NumberWalk> & NumberScan;
  return withKept(text, ordinals === undefined ? { inexact } : { inexact, ordinals, numbers, members });
}

/**
 * What parseJson gives for a text it parsed before (elsewhere: the dataset's thread gets a
 * page's text with them), given the tokens it kept then (`keptTokens` of that parse): the
 * text is not scanned again.
 */
export function parseKept(text: string, kept: KeptTokens): Json {
  return kept.inexact.length === 0 ? (JSON.parse(text) as Json) : withKept(text, kept);
}

/**
 * The value of `text` with the kept tokens as RawNumbers: JSON.parse's with the tokens put in
 * place where the loop counted where they are, else the text parsed with them marked.
 */
function withKept(text: string, kept: KeptTokens): Json {
  const walked = kept.ordinals === undefined ? undefined : keptInPlace(text, JSON.parse(text) as Json, kept as KeptWalkTokens);
  const value = walked ?? parsedAround(text, kept.inexact);
  if (value !== null && typeof value === 'object') losslessDocuments.set(value, kept);
  return value;
}

/** The text parsed with the tokens of `inexact` marked as strings, or by the careful parser when a string could be taken for a mark. */
const parsedAround = (text: string, inexact: readonly number[]): Json => (text.includes('\\u0000') ? new LosslessParser(text).parseDocument() : parsedMarked(text, inexact));

function parsedMarked(text: string, inexact: readonly number[]): Json {
  try {
    return unmark(JSON.parse(marked(text, inexact)) as Json);
  } catch (error) {
    // What is wrong is said of the text itself; a text that is JSON after all (not a case the
    // marks can make) is read by the careful parser.
    if (!(error instanceof SyntaxError)) throw error;
    JSON.parse(text);
    return new LosslessParser(text).parseDocument();
  }
}

/** What a walk needs to put the tokens in place. */
type KeptWalkTokens = Omit<NumberWalk, 'depth'>;

/**
 * JSON.parse's value of `text` with its kept tokens put in place as RawNumbers; undefined when
 * its order may not be the text's (the value is then half changed: drop it). See KeptWalk.
 */
export const keptInPlace = (text: string, parsed: Json, kept: KeptWalkTokens): Json | undefined => KeptWalk.put(text, parsed, kept);

/**
 * Puts the kept tokens into JSON.parse's value of their text, where they are. A walk of the
 * value in the text's order meets its numbers in the order the scan met their tokens, so the
 * Nth number met is the Nth token. JSON.parse's order is the text's unless an object has a key
 * that is an array index (V8 lists those first) or the same key twice (the last value, in the
 * first one's place): a key that starts with a digit, or fewer members or numbers than the scan
 * counted, and the walk gives up (the text is then parsed again around the tokens). Costs what
 * `unmark` costs, where marking the text and parsing it again cost as much as a parse.
 */
class KeptWalk {
  private met = 0;
  private next = 0;
  private members = 0;
  private odd = false;

  private constructor(
    private readonly text: string,
    private readonly kept: KeptWalkTokens,
  ) {}

  static put(text: string, parsed: Json, kept: KeptWalkTokens): Json | undefined {
    const walk = new KeptWalk(text, kept);
    const value = walk.value(parsed);
    const { met, next, members, odd } = walk;
    return !odd && met === kept.numbers && members === kept.members && next === kept.ordinals.length ? value : undefined;
  }

  private value(value: Json): Json {
    if (typeof value === 'number') return this.number(value);
    if (value === null || typeof value !== 'object' || this.odd) return value;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const item = value[i]!;
        if (typeof item === 'number' || (item !== null && typeof item === 'object')) value[i] = this.value(item);
      }
      return value;
    }
    const object = value as Record<string, Json>;
    for (const key in object) {
      this.members++;
      const first = key.charCodeAt(0);
      if (first >= 48 && first <= 57) this.odd = true;
      const item = object[key]!;
      if (typeof item === 'number' || (item !== null && typeof item === 'object')) object[key] = this.value(item);
    }
    return value;
  }

  private number(value: number): Json {
    if (this.met++ !== this.kept.ordinals[this.next]) return value;
    const at = 2 * this.next++;
    // A copy: a slice of the page would keep the whole page's text alive as long as the number.
    return new RawNumber(copied(this.text.slice(this.kept.inexact[at], this.kept.inexact[at + 1])));
  }
}

/** A string of its own: V8 flattens the pair into a new string before slicing it. */
const copied = (slice: string): string => `${slice} `.slice(0, -1);

/** Where parseJson found the tokens it kept as text in this document; undefined when it kept none. */
export const keptTokens = (document: Json): KeptTokens | undefined => (document !== null && typeof document === 'object' ? losslessDocuments.get(document) : undefined);

/** The text with each token of `inexact` (offset pairs) wrapped as a string that starts with U+0000. */
function marked(text: string, inexact: readonly number[]): string {
  let out = '';
  let at = 0;
  for (let k = 0; k < inexact.length; k += 2) {
    out += `${text.slice(at, inexact[k])}${MARK}${text.slice(inexact[k], inexact[k + 1])}"`;
    at = inexact[k + 1]!;
  }
  return out + text.slice(at);
}

/** Whether `parseJson` kept numbers as text in this document. */
export const parsedLosslessly = (document: Json): boolean => document !== null && typeof document === 'object' && losslessDocuments.has(document);

// How many values stringifyJson writes with marks before the hand-written way (see the top of
// this file): two pages of records.
const MARKED_VALUES = 1000;
let valuesWritten = 0;

/** JSON text of a value, writing RawNumbers as they were received. */
export function stringifyJson(value: Json): string {
  if (valuesWritten < MARKED_VALUES) {
    valuesWritten++;
    return stringifyJsonCold(value);
  }
  return containsRaw(value) ? stringifyLossless(value) : JSON.stringify(value);
}

// A mark as JSON.stringify writes it: `"\u0000` (7 characters), a number token, `"`.
const WRITTEN_MARK = /"\\u0000([-+.\deE]+)"/g;

/**
 * stringifyJson the way of a process whose JavaScript has not warmed up: JSON.stringify, each
 * RawNumber written as a mark (its toJSON), the marks then replaced by their tokens in one
 * pass. A string or key of the value that starts with U+0000 would read as a mark too: then
 * fewer than 8 characters a mark go, and the value is written by hand.
 */
export function stringifyJsonCold(value: Json): string {
  marksWritten = 0;
  marking = true;
  let text: string;
  try {
    text = JSON.stringify(value);
  } finally {
    marking = false;
  }
  if (marksWritten === 0) return text;
  const written = text.replace(WRITTEN_MARK, '$1');
  return written.length === text.length - 8 * marksWritten ? written : stringifyLossless(value);
}

function containsRaw(value: Json): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (value instanceof RawNumber) return true;
  if (Array.isArray(value)) return value.some(containsRaw);
  for (const key in value) if (containsRaw(value[key]!)) return true;
  return false;
}

/**
 * What JSON.stringify writes, with each RawNumber's text. By hand, as the one path that is
 * about as fast as JSON.stringify (a replacer or toJSON takes it off its fast path).
 */
function stringifyLossless(value: Json): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (value instanceof RawNumber) return value.text;
  let out: string;
  if (Array.isArray(value)) {
    out = '[';
    for (let i = 0; i < value.length; i++) out += `${i === 0 ? '' : ','}${stringifyLossless(value[i]!)}`;
    return `${out}]`;
  }
  out = '{';
  let comma = '';
  for (const key in value) {
    const item = value[key];
    if (item === undefined) continue;
    // Plain concatenation, a key's text remembered: the template literal and a JSON.stringify of
    // each key made this 1.6x slower (each record of a snapshot is written here, 300,000 in 2 s).
    out += comma + keyText(key) + ':' + (typeof item === 'string' || typeof item === 'number' ? JSON.stringify(item) : item === null ? 'null' : stringifyLossless(item));
    comma = ',';
  }
  return out + '}';
}

/** The JSON text of the keys met, kept while there are few of them (a route's records have a dozen). */
const KEY_TEXTS = new Map<string, string>();

function keyText(key: string): string {
  let text = KEY_TEXTS.get(key);
  if (text === undefined) {
    text = JSON.stringify(key);
    if (KEY_TEXTS.size < 4096) KEY_TEXTS.set(key, text);
  }
  return text;
}

/** A number token where the parser stands (sticky: no copy of the text, and no length limit). */
const NUMBER_AT = new RegExp(NUMBER_TOKEN, 'y');

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
      // Defined, not assigned: an assigned `__proto__` would set the prototype, as JSON.parse does not.
      Object.defineProperty(result, key, { value: this.value(), enumerable: true, writable: true, configurable: true });
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
    NUMBER_AT.lastIndex = this.pos;
    const match = NUMBER_AT.exec(this.text);
    if (!match) return this.fail('invalid number');
    this.pos += match[0].length;
    const value = Number(match[0]);
    return String(value) === match[0] ? value : new RawNumber(match[0]);
  }
}
