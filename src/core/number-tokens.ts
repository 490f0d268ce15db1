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

/** A number token as JSON's grammar writes it (RFC 8259): the one source of every expression in sgq that reads one. */
export const NUMBER_TOKEN = String.raw`-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?`;

const NUMBER = new RegExp(`^${NUMBER_TOKEN}$`);

const keptToken = (token: string): boolean => NUMBER.test(token) && keptAsText(token);

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

/** Where a JSON text holds number tokens to keep as text, and how deep it nests. */
export interface NumberScan {
  /** The [start, end) offsets of each token outside strings to keep as text (see keptAsText), in order. */
  inexact: number[];
  /** The deepest nesting of arrays and objects. */
  depth: number;
}

/** What the loop also counts: where a walk of the parsed value meets each token (json.ts KeptWalk). */
export interface NumberWalk extends NumberScan {
  /** Of each token to keep, how many number tokens come before it. */
  ordinals: number[];
  /** The number tokens of the text, and its members (`"key":` of an object), each counted once. */
  numbers: number;
  members: number;
}

/**
 * The number tokens to keep and the depth of a JSON text, found by the regular expression
 * engine, which runs natively from the first call: a one-page command runs this once, in a
 * process whose JavaScript has not warmed up, where the loop of scanNumbers took 4-7 ms of a
 * 237 kB page and this a tenth of that (once warm, the loop takes half of what this does). It
 * does not count the tokens (NumberWalk). The engine's backtrack stack is bounded, and a string
 * of millions of escapes overflows it: such a text is scanned by the loop.
 */
export function findNumbers(text: string): NumberScan | NumberWalk {
  try {
    return { inexact: tokensToKeep(text), depth: depthOf(text) };
  } catch (error) {
    if (error instanceof RangeError) return scanNumbers(text);
    throw error;
  }
}

// From where it starts, skips what cannot be a token to keep, each part atomic ((?=(…))\1: no
// failure backtracks into it, so no text costs more than one pass): runs of other characters,
// strings, and plain integers of 15 digits or fewer (not -0), which always print back as
// written. Then the next other number token (group 3: JSON's grammar, so that what is not a
// number is never marked as one), or none: after 512 parts, or at the end. The bound is the
// engine's backtrack stack, some 130 bytes a part, grown on the first page of a run: at 4,096
// parts its 530 kB of fresh memory cost a one-page run 2-3 ms on Node 20 and 22 (133 page
// faults against 23); the calls it takes more cost microseconds.
const NEXT_TOKEN = new RegExp(String.raw`(?:(?=([^"\d-]+))\1|"(?=([^"\\]*(?:\\.[^"\\]*)*))\2"|(?:-?[1-9]\d{0,14}|0)(?![\d.eE])){0,512}(${NUMBER_TOKEN})?`, 'y');

function tokensToKeep(text: string): number[] {
  const inexact: number[] = [];
  const next = NEXT_TOKEN;
  next.lastIndex = 0;
  while (next.lastIndex < text.length) {
    const match = next.exec(text);
    // Nothing skipped and no token: not JSON (JSON.parse will say so).
    if (match === null || match[0].length === 0) break;
    const token = match[3];
    if (token !== undefined && keptAsText(token)) inexact.push(next.lastIndex - token.length, next.lastIndex);
  }
  return inexact;
}

// Strings and everything else but brackets, removed in one pass: what is left is the text's
// brackets in order, a few hundred characters for a page.
const NOT_BRACKETS = /"[^"\\]*(?:\\.[^"\\]*)*"|[^[\]{}"]+/g;

function depthOf(text: string): number {
  const brackets = text.replace(NOT_BRACKETS, '');
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < brackets.length; i++) {
    const c = brackets.charCodeAt(i);
    if (c === 91 || c === 123) {
      if (++depth > deepest) deepest = depth;
    } else depth--;
  }
  return deepest;
}

/**
 * One pass over a JSON text in a loop. Strings are skipped with indexOf, so once V8 has
 * compiled it, the pass costs about what a search of the text for one word costs. A token
 * that is not JSON's is not kept: the text is not JSON, as JSON.parse will say.
 */
export function scanNumbers(text: string): NumberWalk {
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
      if ((!plain || j - i > 15) && keptToken(text.slice(i, j))) {
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
