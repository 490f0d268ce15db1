// Where a JSON text holds number tokens that JSON.parse would change: `1.0` (read as 1), `-0`
// (printed as 0), `1E400` (Infinity), `0.12345678901234567890123` and integers past 2^53
// (rounded). Only a token with a '.', an exponent, a '-' or 16 digits or more can be one: a
// shorter plain integer always prints back as written, so most tokens are never looked at.

/** Whether JSON.parse keeps a number token as written: String(value) gives the same text. */
export const printsBack = (token: string): boolean => String(Number(token)) === token;

const QUOTE = 34;
const BACKSLASH = 92;
const OPENERS = new Set([91, 123]); // [ {
const CLOSERS = new Set([93, 125]); // ] }

/** The index just past the string that opens at `start`: the first quote not escaped. */
function endOfString(text: string, start: number): number {
  let end = text.indexOf('"', start + 1);
  for (;;) {
    if (end < 0) return text.length;
    let slashes = 0;
    while (text.charCodeAt(end - 1 - slashes) === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return end + 1;
    end = text.indexOf('"', end + 1);
  }
}

/** The index just past the number token at `start`, and whether it is a plain integer (digits only). */
function endOfNumber(text: string, start: number): [end: number, plain: boolean] {
  let plain = text.charCodeAt(start) !== 45;
  let j = start + 1;
  for (; j < text.length; j++) {
    const d = text.charCodeAt(j);
    if (d >= 48 && d <= 57) continue;
    // '-', '+', '.', 'e', 'E'
    if (d !== 45 && d !== 43 && d !== 46 && d !== 101 && d !== 69) break;
    plain = false;
  }
  return [j, plain];
}

/** What one pass over a JSON text found. */
export interface NumberScan {
  /** The [start, end) offsets of each token outside strings that JSON.parse would change, in order. */
  inexact: number[];
  /** The deepest nesting of arrays and objects. */
  depth: number;
}

/**
 * One pass over a valid JSON text (JSON.parse said so first). Strings are skipped with indexOf,
 * so the pass costs about what a search of the text for one word costs.
 */
export function scanNumbers(text: string): NumberScan {
  const inexact: number[] = [];
  let depth = 0;
  let deepest = 0;
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = endOfString(text, i);
    } else if (c === 45 || (c >= 48 && c <= 57)) {
      const [end, plain] = endOfNumber(text, i);
      if ((!plain || end - i > 15) && !printsBack(text.slice(i, end))) inexact.push(i, end);
      i = end;
    } else {
      if (OPENERS.has(c) && ++depth > deepest) deepest = depth;
      else if (CLOSERS.has(c)) depth--;
      i++;
    }
  }
  return { inexact, depth: deepest };
}
