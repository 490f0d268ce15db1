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
/** An interpolation's `\(` in the stack of open brackets: its `)` returns to the string. */
const INTERPOLATION = '\\(';

/**
 * The first builtin of STREAM_BUILTINS the filter calls, or undefined. Names in strings (but
 * not in their interpolations), in comments, after `.` (a field), `$` (a variable) or `def`,
 * and before `:` (an object key) are not calls. It errs on the side of finding one: a filter
 * that defines its own `input` is refused too.
 */
export function streamBuiltinIn(filter: string): string | undefined {
  return new Scanner(filter).scan();
}

class Scanner {
  private at = 0;
  /** The last character before the current one that was not white space. */
  private previous = '';
  /** The brackets open around the current character, innermost last. */
  private readonly open: string[] = [];

  constructor(private readonly text: string) {}

  /** Scans to the end (a loop, not a recursion: interpolations nest as deep as the filter likes). */
  scan(): string | undefined {
    let inString = false;
    while (this.at < this.text.length) {
      const c = this.text[this.at]!;
      if (inString) {
        inString = this.stringPart(c);
        continue;
      }
      if (c === '"') {
        this.at++;
        inString = true;
      } else if (c === '#') this.comment();
      else if (/[A-Za-z_]/.test(c)) {
        const found = this.name();
        if (found) return found;
      } else if (c === ')' && this.open.at(-1) === INTERPOLATION) {
        // The end of `\( … )`: the string goes on.
        this.open.pop();
        this.at++;
        inString = true;
      } else {
        if ('([{'.includes(c)) this.open.push(c);
        else if (')]}'.includes(c)) this.open.pop();
        this.step(c);
      }
    }
    return undefined;
  }

  /** One step inside a string literal, from `c`; whether the string goes on (false at its end or an interpolation's start). */
  private stringPart(c: string): boolean {
    if (c === '"') {
      this.at++;
      this.previous = '"';
      return false;
    }
    if (c === '\\' && this.text[this.at + 1] === '(') {
      this.at += 2;
      this.open.push(INTERPOLATION);
      this.previous = '(';
      return false;
    }
    this.at += c === '\\' ? 2 : 1;
    return true;
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
