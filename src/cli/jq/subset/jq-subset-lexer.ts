// The tokens of a --jq filter, for the subset of jq that sgq answers itself (jq-subset.ts), or
// undefined when the filter holds anything the subset leaves to jq (`..`, `$x`, `?`, `#`, an
// escape JSON does not have, a lone surrogate, a raw control character in a string).
//
// A string literal is one token, its text decoded and written again as a JSON string literal.
// A string with interpolations, "a\(x)b\(y)c", is a run of tokens: «"a" x »("b" y »"c": the
// expression tokens of each \( … ) between markers carrying the text around them.

/** Opens an interpolated string; carries its text up to the first `\(`. */
export const OPEN = '«';
/** Closes an interpolation that another follows; carries the text between them. */
export const NEXT = '»(';
/** Closes the last interpolation; carries the rest of the string. */
export const LAST = '»"';

// jq's white space is these four characters only (JavaScript's \s has many more).
const SPACE = /[ \t\r\n]*/y;
const TOKEN = /\.[A-Za-z_][A-Za-z0-9_]*|[A-Za-z_][A-Za-z0-9_]*|@[A-Za-z0-9_]+|-?[0-9]+|==|!=|\/\/|<=|>=|[<>.|(){}[\]:,]/y;

export function tokenize(filter: string): string[] | undefined {
  const lexer = new Lexer(filter);
  return lexer.expression(false) ? lexer.tokens : undefined;
}

class Lexer {
  readonly tokens: string[] = [];
  private at = 0;

  constructor(private readonly text: string) {}

  /** Tokens up to the end of the filter, or, inside `\(`, up to its closing parenthesis (consumed). */
  expression(inside: boolean): boolean {
    let depth = 0;
    for (;;) {
      SPACE.lastIndex = this.at;
      SPACE.exec(this.text);
      this.at = SPACE.lastIndex;
      if (this.at >= this.text.length) return !inside;
      const c = this.text[this.at];
      if (c === '"') {
        if (!this.string()) return false;
        continue;
      }
      if (inside && c === ')' && depth === 0) {
        this.at++;
        return true;
      }
      TOKEN.lastIndex = this.at;
      const token = TOKEN.exec(this.text)?.[0];
      // `..` is jq's recursion, not two dots.
      if (token === undefined || (token === '.' && this.text[TOKEN.lastIndex] === '.')) return false;
      if (token === '(') depth++;
      else if (token === ')') depth--;
      this.tokens.push(token);
      this.at = TOKEN.lastIndex;
    }
  }

  /** A string literal from its opening quote: one token, or the markers and tokens of its interpolations. */
  private string(): boolean {
    let from = ++this.at;
    let interpolated = false;
    for (;;) {
      const c = this.text.charCodeAt(this.at);
      // The filter ends inside the string, or jq would take a raw control character as it is.
      if (Number.isNaN(c) || c < 0x20) return false;
      if (c === 0x22) {
        const rest = this.part(from, this.at++);
        if (rest === undefined) return false;
        this.tokens.push(interpolated ? LAST + rest : rest);
        return true;
      }
      if (c === 0x5c && this.text[this.at + 1] === '(') {
        const before = this.part(from, this.at);
        if (before === undefined) return false;
        this.tokens.push((interpolated ? NEXT : OPEN) + before);
        interpolated = true;
        this.at += 2;
        if (!this.expression(true)) return false;
        from = this.at;
        continue;
      }
      // An escape is two characters at least; part() checks it is one JSON (and jq) reads alike.
      this.at += c === 0x5c ? 2 : 1;
    }
  }

  /** The text between two offsets, its escapes decoded by JSON's rules (jq's are the same), as a JSON literal. */
  private part(from: number, to: number): string | undefined {
    try {
      const value = JSON.parse(`"${this.text.slice(from, to)}"`) as string;
      // jq reads an escaped lone surrogate as U+FFFD.
      return (value as string & { isWellFormed(): boolean }).isWellFormed() ? JSON.stringify(value) : undefined;
    } catch {
      return undefined;
    }
  }
}
