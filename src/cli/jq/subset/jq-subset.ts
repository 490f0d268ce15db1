import type { JsonObject } from '../../../core/classify.js';
import type { Json } from '../../../core/json.js';
import { LAST, NEXT, OPEN, tokenize } from './jq-subset-lexer.js';
import { line, printed, row, text } from './jq-subset-print.js';
import { regexTest } from './jq-subset-regex.js';
import { asciiCase, Bail, compare, EMPTY, field, has, length, readable, slice, split, stringInput, truthy, type Result } from './jq-subset-values.js';

// src/cli/jq/subset/: sgq's subset of jq, a second jq semantics kept beside jq-wasm because the
// --jq target (any filter within 1.10x of the same export piped into the machine's jq) is not
// met without it. Measured (issue 35): with the subset, common filters (a field; a select
// building an object) ran at 0.43-0.67x of a pipe into jq 1.6; without it, at 1.04-1.21x.
// `split("_")` and `test("7+$")` were 0.94-1.24x run by jq-wasm, and 0.41-0.55x answered here
// (peak RSS 65-72 MiB, not 97-99: no jq thread). Its gate is its differential
// test against jq (test/unit/jq-subset.test.ts): a construct enters the subset only with it.
//
// The commonest --jq filters pick fields, select records and build small objects:
// `.username`, `select(.followers_count >= 1000) | {username, n: (.name | length)}`. jq
// re-reads every record's JSON and, as WebAssembly, first pays V8's optimizing compile of its hot
// functions (about a quarter of a second of CPU in each run); such filters are answered here over
// the records already parsed. A strict subset of jq's grammar, each construct with jq's meaning:
//   pipe  := alt ('|' alt)*     alt := or ('//' alt)?     or := and ('or' and)*     and := cmp ('and' cmp)*
//   cmp   := term (('=='|'!='|'<'|'<='|'>'|'>=') term)?  term := primary suffix*  suffix := .name | [m:n]
//   primary := . | .name | "text" | "text \(pipe) text" | integer | null | true | false | (pipe)
//            | [] | [pipe] | [alt, alt, …] | { key: value, key, … } | not | length | tostring
//            | ascii_downcase | ascii_upcase | @csv | @tsv | @json | @text | select(pipe)
//            | has("key") | test("regex") | startswith("text") | endswith("text") | split("text")
//   value := term ('|' term)*  (jq's grammar: an object's values take no operators)
//   regex := the regular expressions whose matches JavaScript's RegExp finds as jq's Oniguruma does (jq-subset-regex.ts)
// Any other filter goes to jq; a value the subset cannot answer exactly (values-of: jq-subset-values.ts)
// sends its page, and every later one, to jq. Results match jq-wasm's byte for byte
// (test/unit/jq-subset.test.ts compares them over hostile records).

/** A compiled filter: its result for a value, EMPTY for none; throws Bail where only jq knows. */
export type Subset = (v: Json) => Result;

// jq's keywords: not an object's key here (jq 1.6 refused them), never a function.
const KEYWORDS = new Set(['__loc__', 'and', 'as', 'catch', 'def', 'elif', 'else', 'end', 'foreach', 'if', 'import', 'include', 'label', 'or', 'reduce', 'then', 'try']);

/** The filter compiled, or undefined when it is not in the subset (jq then runs it). */
export function compileSubset(filter: string): Subset | undefined {
  try {
    const tokens = tokenize(filter);
    if (!tokens) return undefined;
    const parser = new Parser(tokens);
    const program = parser.pipe();
    return parser.done() ? program : undefined;
  } catch (error) {
    // A filter nested deeper than this recursive descent goes (JavaScript's stack) is jq's to read, or refuse.
    if (error instanceof NotInSubset || error instanceof RangeError) return undefined;
    throw error;
  }
}

class NotInSubset extends Error {}

const COMPARISONS: Record<string, (order: number) => boolean> = {
  '==': (o) => o === 0, '!=': (o) => o !== 0, '<': (o) => o < 0, '<=': (o) => o <= 0, '>': (o) => o > 0, '>=': (o) => o >= 0,
};
/** Builtins of no argument, applied to their input. */
const BUILTINS: Record<string, Subset> = {
  not: (v) => !truthy(v), length, tostring: text, ascii_downcase: asciiCase(false), ascii_upcase: asciiCase(true),
  '@text': text, '@json': printed, '@csv': row(false), '@tsv': row(true),
};
/** Builtins of one string literal, applied to a string (jq fails on any other input): undefined for an argument jq must take. */
const STRING_BUILTINS: Record<string, (arg: string) => ((s: string) => Json) | undefined> = {
  test: regexTest,
  startswith: (prefix) => (s) => s.startsWith(prefix),
  endswith: (suffix) => (s) => s.endsWith(suffix),
  split: (separator) => (s) => split(s, separator),
};
// An integer literal the subset takes: exact as a double, and printed by jq as written (no leading zero).
const INTEGER = /^-?(?:0|[1-9][0-9]{0,14})$/;

/** Evaluates the operands of a binary operator on the same input, both of them (a failure in either is jq's). */
function both(a: Subset, b: Subset, op: (x: Json, y: Json) => Json): Subset {
  return (v) => {
    const x = a(v);
    const y = b(v);
    return x === EMPTY || y === EMPTY ? EMPTY : op(x, y);
  };
}

/** `a and b`, `a or b`: jq's short circuit, the result a boolean. */
function logical(a: Subset, b: Subset, isAnd: boolean): Subset {
  return (v) => {
    const x = a(v);
    if (x === EMPTY) return EMPTY;
    if (truthy(x) !== isAnd) return !isAnd;
    const y = b(v);
    return y === EMPTY ? EMPTY : truthy(y);
  };
}

const then = (a: Subset, b: Subset): Subset => (v) => {
  const x = a(v);
  return x === EMPTY ? EMPTY : b(x);
};

class Parser {
  private at = 0;
  constructor(private readonly tokens: string[]) {}

  done = () => this.at === this.tokens.length;
  private peek = () => this.tokens[this.at];
  private next = () => this.tokens[this.at++] ?? this.fail();
  private fail(): never {
    throw new NotInSubset();
  }
  private eat(token: string): boolean {
    if (this.peek() !== token) return false;
    this.at++;
    return true;
  }
  private expect(token: string): void {
    if (!this.eat(token)) this.fail();
  }
  private string(): string {
    const token = this.next();
    return token.startsWith('"') ? (JSON.parse(token) as string) : this.fail();
  }

  pipe(operand = () => this.alternative(), first = operand()): Subset {
    let program = first;
    while (this.eat('|')) program = then(program, operand());
    return program;
  }

  /** `a // b`: a's result unless it is none, null or false (jq's errors in a are jq's: they bail). */
  private alternative(): Subset {
    const first = this.or();
    if (!this.eat('//')) return first;
    const second = this.alternative();
    return (v) => {
      const x = first(v);
      return x !== EMPTY && truthy(x) ? x : second(v);
    };
  }

  private or(): Subset {
    let program = this.and();
    while (this.eat('or')) program = logical(program, this.and(), false);
    return program;
  }

  private and(): Subset {
    let program = this.cmp();
    while (this.eat('and')) program = logical(program, this.cmp(), true);
    return program;
  }

  private cmp(): Subset {
    const left = this.term();
    const test = COMPARISONS[this.peek() ?? ''];
    if (!test) return left;
    this.at++;
    return both(left, this.term(), (x, y) => test(compare(x, y)));
  }

  private term(): Subset {
    let program = this.primary();
    for (;;) {
      const token = this.peek();
      if (token?.startsWith('.') && token.length > 1) {
        this.at++;
        const name = token.slice(1);
        program = then(program, (v) => field(v, name));
      } else if (token === '[') {
        this.at++;
        program = then(program, this.slice());
      } else return program;
    }
  }

  /** `[m:n]`, either bound left out (not both), each an integer literal. */
  private slice(): Subset {
    const bound = () => (/^-?[0-9]{1,9}$/.test(this.peek() ?? '') ? Number(this.next()) : undefined);
    const from = bound();
    this.expect(':');
    const to = bound();
    this.expect(']');
    if (from === undefined && to === undefined) this.fail();
    return (v) => slice(v, from, to);
  }

  private primary(): Subset {
    const token = this.next();
    if (token === '.') return (v) => v;
    if (token.startsWith('.')) return (v) => field(v, token.slice(1));
    if (token.startsWith('"')) {
      const text = JSON.parse(token) as string;
      return () => text;
    }
    if (token === '(') {
      const inner = this.pipe();
      this.expect(')');
      return inner;
    }
    if (token === '{') return this.object();
    if (token === '[') return this.array();
    if (token.startsWith(OPEN)) return this.interpolation(JSON.parse(token.slice(OPEN.length)) as string);
    if (INTEGER.test(token)) {
      const n = Number(token);
      return () => n;
    }
    return this.word(token);
  }

  private word(token: string): Subset {
    if (token === 'null' || token === 'true' || token === 'false') {
      const value = JSON.parse(token) as Json;
      return () => value;
    }
    if (Object.hasOwn(BUILTINS, token)) return BUILTINS[token]!;
    this.expect('(');
    const program = token === 'select' ? this.selectOf(this.pipe()) : token === 'has' ? this.hasKey(this.string()) : this.stringBuiltin(token, this.string());
    this.expect(')');
    return program;
  }

  private selectOf(condition: Subset): Subset {
    return (v) => {
      const c = condition(v);
      return c !== EMPTY && truthy(c) ? v : EMPTY;
    };
  }

  private hasKey(key: string): Subset {
    return (v) => has(v, key);
  }

  private stringBuiltin(name: string, arg: string): Subset {
    const f = Object.hasOwn(STRING_BUILTINS, name) ? STRING_BUILTINS[name]!(arg) : undefined;
    if (!f) this.fail();
    return (v) => f(stringInput(v));
  }

  /** `[]`, `[pipe]`, or `[alt, alt, …]` (a pipe and a comma together are jq's): the results, none for an empty one. */
  private array(): Subset {
    const items: Subset[] = [];
    if (!this.eat(']')) {
      const first = this.alternative();
      if (this.peek() === '|') items.push(this.pipe(() => this.alternative(), first));
      else {
        items.push(first);
        while (this.eat(',')) items.push(this.alternative());
      }
      this.expect(']');
    }
    return (v) => {
      const out: Json[] = [];
      for (const item of items) {
        const x = item(v);
        if (x !== EMPTY) out.push(x);
      }
      return out;
    };
  }

  /** `"a\(x)b\(y)c"` after its first text: each value as `tostring` writes it; none if any part gives none. */
  private interpolation(first: string): Subset {
    const parts: (string | Subset)[] = [first];
    for (;;) {
      parts.push(this.pipe());
      const token = this.next();
      const last = token.startsWith(LAST);
      if (!last && !token.startsWith(NEXT)) this.fail();
      parts.push(JSON.parse(token.slice(2)) as string);
      if (last) break;
    }
    return (v) => {
      let out = '';
      for (const part of parts) {
        if (typeof part === 'string') out += part;
        else {
          const x = part(v);
          if (x === EMPTY) return EMPTY;
          out += text(x);
        }
      }
      return out;
    };
  }

  /** `{key: value, key, "text": value}`; keys as written, each once. */
  private object(): Subset {
    const entries: [string, Subset][] = [];
    if (!this.eat('}')) {
      do entries.push(this.entry());
      while (this.eat(','));
      this.expect('}');
    }
    if (new Set(entries.map(([key]) => key)).size !== entries.length) this.fail();
    // A plain object keeps V8's fast properties (the same shape each record); only a key
    // `__proto__` needs one without a prototype, where it is a key like any other.
    const bare = entries.some(([key]) => key === '__proto__');
    return (v) => {
      const out = (bare ? Object.create(null) : {}) as Record<string, Json>;
      let empty = false;
      for (const [key, value] of entries) {
        const x = value(v);
        if (x === EMPTY) empty = true;
        else out[key] = x;
      }
      return empty ? EMPTY : out;
    };
  }

  private entry(): [string, Subset] {
    const token = this.next();
    const key = token.startsWith('"') ? (JSON.parse(token) as string) : /^[A-Za-z_]/.test(token) && !KEYWORDS.has(token) ? token : this.fail();
    if (this.eat(':')) return [key, this.pipe(() => this.term())];
    if (token.startsWith('"')) this.fail();
    return [key, (v) => field(v, key)];
  }
}

/** What sgq prints for these records (jq -r's lines), or undefined when a record needs jq itself. */
export function subsetLines(records: readonly JsonObject[], program: Subset): string | undefined {
  let out = '';
  try {
    for (const record of records) {
      const result = program(readable(record));
      if (result !== EMPTY) out += line(result);
    }
  } catch (error) {
    if (error instanceof Bail) return undefined;
    throw error;
  }
  return out;
}
