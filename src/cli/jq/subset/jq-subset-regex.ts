// The regular expressions of `test("…")` that sgq's subset of jq answers with a JavaScript
// RegExp: those whose matches are the same in jq's Oniguruma (Perl syntax, one line, UTF-8)
// as in JavaScript. jq-wasm runs a regular expression in Oniguruma compiled to WebAssembly, and
// V8's optimizing compile of it cost a --jq run 0.4-0.8 s of CPU more than the pipe into jq.
//
//   pattern := branch ('|' branch)*     branch := ('^' | '$' | atom quantifier?)*
//   atom := literal | '\' syntax character | '.' | '[' '^'? (c | c '-' c)+ ']' | '(' pattern ')'
//   quantifier := '*' | '+' | '?'        literal := [A-Za-z0-9_ @:,=/-]     c := [A-Za-z0-9_ @:,=/]
//
// Where the two differ, the pattern is translated: Oniguruma's `$` is the end or just before a
// final newline, `^` only the start, and `.` any character but a newline (JavaScript's `.`
// leaves out \r and U+2028 too); `u` makes `.` and `[^…]` take a character, not half of one.
// Classes such as \d and \w (Unicode in Oniguruma, ASCII in JavaScript), intervals `{m,n}` and
// flags stay jq's. At most one `*` or `+` and four quantifiers in all: Oniguruma fails a match
// that backtracks more than ten million times, so a pattern whose backtracking grows as a power
// of the string's length is left to it.

const LITERAL = /[A-Za-z0-9_ @:,=/-]/;
/** A character of a class: a literal but `-`, which says a range there. */
const MEMBER = /[A-Za-z0-9_ @:,=/]/;
const SYNTAX = /[\\^$.*+?()[\]{}|/]/;
const MAX_QUANTIFIERS = 4;

/** A test of a string by the pattern, or undefined when jq must run it. */
export function regexTest(pattern: string): ((s: string) => boolean) | undefined {
  const translated = new Translator(pattern).translate();
  if (translated === undefined) return undefined;
  const regex = new RegExp(translated, 'u');
  return (s) => regex.test(s);
}

class Translator {
  private at = 0;
  private quantifiers = 0;
  private unbounded = 0;

  constructor(private readonly text: string) {}

  /** JavaScript's source for the whole pattern, or undefined outside the grammar. */
  translate(): string | undefined {
    const source = this.pattern();
    const within = this.quantifiers <= MAX_QUANTIFIERS && this.unbounded <= 1;
    return source !== undefined && this.at === this.text.length && within ? source : undefined;
  }

  private pattern(): string | undefined {
    let source = this.branch();
    while (source !== undefined && this.text[this.at] === '|') {
      this.at++;
      const next = this.branch();
      source = next === undefined ? undefined : `${source}|${next}`;
    }
    return source;
  }

  private branch(): string | undefined {
    let source = '';
    for (let c = this.text[this.at]; c !== undefined && c !== '|' && c !== ')'; c = this.text[this.at]) {
      this.at++;
      if (c === '^' || c === '$') {
        source += c === '^' ? '^' : '(?=\\n?$)';
        continue;
      }
      const atom = this.atom(c);
      if (atom === undefined) return undefined;
      source += atom + this.quantifier();
    }
    return source;
  }

  private atom(c: string): string | undefined {
    if (LITERAL.test(c)) return c;
    if (c === '.') return '[^\\n]';
    if (c === '\\') {
      const escaped = this.text[this.at++];
      return escaped !== undefined && SYNTAX.test(escaped) ? `\\${escaped}` : undefined;
    }
    if (c === '[') return this.characterClass();
    if (c !== '(') return undefined;
    const inner = this.pattern();
    return inner !== undefined && this.text[this.at++] === ')' ? `(?:${inner})` : undefined;
  }

  private quantifier(): string {
    const q = this.text[this.at];
    if (q !== '*' && q !== '+' && q !== '?') return '';
    this.at++;
    this.quantifiers++;
    if (q !== '?') this.unbounded++;
    return q;
  }

  /** `[abc]`, `[a-z0-9_]`, `[^…]`: literal characters and ranges of them, low to high. */
  private characterClass(): string | undefined {
    let source = '[';
    if (this.text[this.at] === '^') source += this.text[this.at++];
    let items = 0;
    for (let c = this.text[this.at++]; c !== ']'; c = this.text[this.at++]) {
      if (c === undefined || !MEMBER.test(c)) return undefined;
      const high = this.text[this.at] === '-' && this.text[this.at + 1] !== ']' ? this.text[this.at + 1] : undefined;
      if (high !== undefined) {
        if (!MEMBER.test(high) || high < c) return undefined;
        this.at += 2;
      }
      source += high === undefined ? c : `${c}-${high}`;
      items++;
    }
    return items === 0 ? undefined : `${source}]`;
  }
}
