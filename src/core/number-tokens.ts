// Where a JSON text holds number tokens that JSON.parse would change: `1.0` (read as 1), `-0`
// (printed as 0), `1E400` (Infinity), `0.12345678901234567890123` and integers past 2^53
// (rounded). Only a token with a '.', an exponent, a '-' or 16 digits or more can be one: a
// shorter plain integer always prints back as written, so most tokens are never looked at.

/** Whether JSON.parse keeps a number token as written: String(value) gives the same text. */
export const printsBack = (token: string): boolean => String(Number(token)) === token;

/**
 * Whether a token must be kept as its text: JSON.parse would change it, or it is an integer
 * past 2^53. Such an integer may print back (`1234567890123456800` is a double that prints
 * so) while its value is another account's id (…768): it stays text, so the library makes
 * it a BigInt of the digits sent.
 */
export function keptAsText(token: string): boolean {
  const value = Number(token);
  return String(value) !== token || (!Number.isSafeInteger(value) && Number.isInteger(value) && !/[.eE]/.test(token));
}

const QUOTE = 34;
const BACKSLASH = 92;

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

/** What one pass over a JSON text found. */
export interface NumberScan {
  /** The [start, end) offsets of each token outside strings to keep as text (see keptAsText), in order. */
  inexact: number[];
  /** Of each of those, how many number tokens come before it: where a walk of the parsed value meets it. */
  ordinals: number[];
  /** The number tokens of the text, and its members (`"key":` of an object), each counted once. */
  numbers: number;
  members: number;
  /** The deepest nesting of arrays and objects. */
  depth: number;
}

/**
 * One pass over a valid JSON text (JSON.parse said so first). Strings are skipped with indexOf,
 * so the pass costs about what a search of the text for one word costs.
 */
export function scanNumbers(text: string): NumberScan {
  const inexact: number[] = [];
  const ordinals: number[] = [];
  let numbers = 0;
  let members = 0;
  const n = text.length;
  let depth = 0;
  let deepest = 0;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = endOfString(text, i);
    } else if (c === 45 || (c >= 48 && c <= 57)) {
      // A plain integer of 15 digits or fewer prints back as written: only others are looked at.
      let plain = c !== 45;
      let j = i + 1;
      for (; j < n; j++) {
        const d = text.charCodeAt(j);
        if (d >= 48 && d <= 57) continue;
        // '-', '+', '.', 'e', 'E'
        if (d !== 45 && d !== 43 && d !== 46 && d !== 101 && d !== 69) break;
        plain = false;
      }
      if ((!plain || j - i > 15) && keptAsText(text.slice(i, j))) {
        inexact.push(i, j);
        ordinals.push(numbers);
      }
      numbers++;
      i = j;
    } else {
      // [ and {, ] and }
      if (c === 91 || c === 123) {
        if (++depth > deepest) deepest = depth;
      } else if (c === 93 || c === 125) {
        depth--;
      } else if (c === 58) {
        // ':' outside a string ends an object's key
        members++;
      }
      i++;
    }
  }
  return { inexact, ordinals, numbers, members, depth: deepest };
}
