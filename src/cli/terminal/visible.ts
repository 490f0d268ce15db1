// Text sgq did not write (the service's records, error records and messages, user names,
// field names, paths) as a person reads it: what would act on a terminal or break a line
// rather than show is escaped visibly. The one decision of what that is, used by the table,
// by every line on stderr, and by csv, tsv, --jq and the JSON formats on a terminal.

/**
 * What would act on a terminal or break a line rather than show: C0 and C1 controls (ESC
 * starts the terminal's escape sequences: OSC 52 writes the clipboard, OSC 0 the window
 * title, CSI 2J clears the screen; `\r` and `\n` start a line that looks like sgq's own) and
 * DEL; the line and paragraph separators; the bidirectional embeddings, overrides and
 * isolates, which reorder what follows them; lone surrogates, which reach the terminal as
 * U+FFFD. Each is a grapheme boundary, so splitting text at them leaves every cluster whole.
 */
export const unsafePattern = (): RegExp => patterns().all;

// Built on first use: V8 builds a Unicode class's sets when it creates the expression, about
// 2M instructions for these two, which a command that shows no text (a one-page run into a
// pipe) does not pay.
let built: { all: RegExp; any: RegExp } | undefined;
function patterns(): { all: RegExp; any: RegExp } {
  if (built) return built;
  const all = /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069\p{Surrogate}]/gu;
  return (built = { all, any: new RegExp(all.source, 'u') });
}

const ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** One unsafe character as it is shown: `\n`, `\r`, `\t`, else `\u{1b}`. */
export const escapeChar = (c: string): string => ESCAPES[c] ?? `\\u{${c.codePointAt(0)!.toString(16)}}`;

/**
 * `text` with every unsafe character escaped visibly (`\u{1b}]52;…`), except those in `keep`
 * (the line breaks of a text whose lines sgq shows as lines). Text without any is returned as
 * it is, at the cost of one scan.
 */
export function visible(text: string, keep = ''): string {
  const { all, any } = patterns();
  if (!any.test(text)) return text;
  return text.replace(all, (c) => (keep.includes(c) ? c : escapeChar(c)));
}

/**
 * JSON text with the unsafe characters JSON leaves as they are (DEL, C1 controls, the
 * separators, the bidirectional marks) written as JSON's own escapes (`\u009b`): the same
 * value to any reader, nothing a terminal acts on. JSON already escapes C0 controls and lone
 * surrogates inside strings; the line breaks between its lines (`keep`) stay.
 */
export function visibleJson(json: string, keep = '\n\t'): string {
  const { all, any } = patterns();
  if (!any.test(json)) return json;
  return json.replace(all, (c) => (keep.includes(c) ? c : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
}
