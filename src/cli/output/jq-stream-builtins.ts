// `--jq` runs the filter over the records in batches, one jq call each (jq-engine.ts). A filter
// that reads the input stream itself or ends it would see each batch as the whole input:
// `reduce inputs as $r (0; . + 1)` printed one count per batch, `[., input]` paired records
// only within a batch, `halt` ended one batch and the next went on. Those builtins are found
// here, before any request, so that such a filter is refused rather than answered wrongly.

/** The builtins that read or end jq's input stream. */
const STREAM_BUILTINS = new Set(['input', 'inputs', 'input_line_number', 'halt']);

// jq's white space, a name (with a module path), and the characters that decide what a name is.
const SPACE = /[ \t\r\n]*/y;
const NAME = /[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*/y;

/**
 * The first builtin of STREAM_BUILTINS the filter calls, or undefined. Names in strings (but
 * not in their interpolations), in comments, after `.` (a field), `$` (a variable) or `def`,
 * and before `:` (an object key) are not calls. It errs on the side of finding one: a filter
 * that defines its own `input` is refused too.
 */
export function streamBuiltinIn(filter: string): string | undefined {
  return new Scanner(filter).scan(false);
}

class Scanner {
  private at = 0;
  /** The last character before the current one that was not white space. */
  private previous = '';
  /** The brackets open around the current character, innermost last. */
  private readonly open: string[] = [];

  constructor(private readonly text: string) {}

  /** Scans to the end, or, inside an interpolation, to its closing parenthesis. */
  scan(inside: boolean): string | undefined {
    const base = this.open.length;
    while (this.at < this.text.length) {
      const c = this.text[this.at]!;
      if (c === '"') {
        const found = this.string();
        if (found) return found;
      } else if (c === '#') this.comment();
      else if (/[A-Za-z_]/.test(c)) {
        const found = this.name();
        if (found) return found;
      } else {
        if (c === ')' && inside && this.open.length === base) {
          this.at++;
          return undefined;
        }
        if ('([{'.includes(c)) this.open.push(c);
        else if (')]}'.includes(c)) this.open.pop();
        this.step(c);
      }
    }
    return undefined;
  }

  private step(c: string): void {
    this.at++;
    if (!/[ \t\r\n]/.test(c)) this.previous = c;
  }

  /**
   * A name; a call of a stream builtin unless it is a field, a variable, a definition, an
   * object key (`{input: 1}`), or an object's shorthand for a field (`{input}`, `{a, input}`).
   */
  private name(): string | undefined {
    NAME.lastIndex = this.at;
    const name = NAME.exec(this.text)![0];
    const before = this.previous;
    this.at = NAME.lastIndex;
    this.previous = name === 'def' ? 'def' : 'name';
    if (!STREAM_BUILTINS.has(name) || before === '.' || before === '$' || before === 'def') return undefined;
    SPACE.lastIndex = this.at;
    SPACE.exec(this.text);
    const after = this.text[SPACE.lastIndex];
    if (after === ':') return undefined;
    const inObject = this.open.at(-1) === '{' && (before === '{' || before === ',');
    return inObject && (after === ',' || after === '}') ? undefined : name;
  }

  /** A string literal from its quote: its text is skipped, its interpolations scanned. */
  private string(): string | undefined {
    this.at++;
    while (this.at < this.text.length) {
      const c = this.text[this.at];
      if (c === '"') break;
      if (c === '\\' && this.text[this.at + 1] === '(') {
        this.at += 2;
        const found = this.scan(true);
        if (found) return found;
        continue;
      }
      this.at += c === '\\' ? 2 : 1;
    }
    this.at++;
    this.previous = '"';
    return undefined;
  }

  /** A comment runs to the end of its line; jq 1.8 continues it past a newline after an odd number of backslashes. */
  private comment(): void {
    for (;;) {
      const end = this.text.indexOf('\n', this.at);
      if (end === -1) {
        this.at = this.text.length;
        return;
      }
      let slashes = 0;
      while (this.text[end - 1 - slashes] === '\\') slashes++;
      this.at = end + 1;
      if (slashes % 2 === 0) return;
    }
  }
}
