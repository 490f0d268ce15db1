// How many terminal columns text takes, and where it may be cut. string-width does the
// measuring (Unicode's East Asian Width, emoji presentation, flags and ZWJ sequences as one
// wide glyph, combining marks and zero-width characters as nothing); Intl.Segmenter finds the
// grapheme clusters, so a cut never splits a character a person sees as one.
//
// string-width is loaded with the table and the progress line only; the Segmenter is built at
// the first cut of non-ASCII text: building it loads ICU's break data, 7 to 20 ms that a run
// of ASCII cells, or a progress line, should not pay.

type StringWidth = (text: string) => number;
let measure: StringWidth | undefined;
let segmenter: Intl.Segmenter | undefined;

export async function loadTextWidth(): Promise<void> {
  measure ??= (await import('string-width')).default;
}

function loaded(): StringWidth {
  if (!measure) throw new Error('loadTextWidth() must run before text is measured');
  return measure;
}

// Printable ASCII is one column a character: most cells of the service are, and skip the rest.
const ASCII = /^[\u0020-\u007e]*$/;

// Characters that are each a grapheme of their own, one or two columns wide by string-width's
// rules, in scripts names are often written in: Latin, Greek, Cyrillic, Hebrew and Arabic
// letters, Thai consonants; kana, CJK ideographs, Hangul syllables, fullwidth forms. Text made of
// these alone is measured by adding up (string-width costs tens of microseconds a cell: a table
// of 200,000 names spent most of its time there). test/unit/text-width.test.ts checks every one.
export const NARROW: readonly (readonly [number, number])[] = [[0xaf, 0x2ff], [0x38e, 0x3a1], [0x3a3, 0x482], [0x48a, 0x52f], [0x5d0, 0x5ea], [0x620, 0x64a], [0xe01, 0xe30], [0x1e00, 0x1f15], [0x2010, 0x2027]];
export const WIDE: readonly (readonly [number, number])[] = [[0x3000, 0x3029], [0x3041, 0x3096], [0x309b, 0x30ff], [0x3400, 0x4dbf], [0x4e00, 0x9fff], [0xac00, 0xd7a3], [0xf900, 0xfa6d], [0xff01, 0xff60]];

const within = (ranges: readonly (readonly [number, number])[], c: number): boolean => ranges.some(([from, to]) => c >= from && c <= to);

/** The columns one UTF-16 unit of such text takes: 0 when it is not one of them. */
function simpleWidthOf(c: number): number {
  if (c >= 0x20 && c <= 0x7e) return 1;
  if (c < 0xaf) return 0;
  return within(NARROW, c) ? 1 : within(WIDE, c) ? 2 : 0;
}

/** The columns of text made of those characters alone; undefined for any other text. */
function simpleWidth(text: string): number | undefined {
  let width = 0;
  for (let i = 0; i < text.length; i++) {
    const w = simpleWidthOf(text.charCodeAt(i));
    if (w === 0) return undefined;
    width += w;
  }
  return width;
}

/** The columns `text` takes on a terminal. */
export function displayWidth(text: string): number {
  return ASCII.test(text) ? text.length : (simpleWidth(text) ?? loaded()(text));
}

/**
 * The longest start of `text` that takes at most `width` columns, cut between grapheme
 * clusters (never inside an emoji sequence, a letter and its marks, or a surrogate pair),
 * with the columns it takes.
 */
export function cutToWidth(text: string, width: number): { text: string; width: number } {
  if (ASCII.test(text)) return { text: text.slice(0, Math.max(0, width)), width: Math.max(0, Math.min(width, text.length)) };
  if (simpleWidth(text) !== undefined) return cutSimple(text, width);
  const measureOf = loaded();
  segmenter ??= new Intl.Segmenter();
  let end = 0;
  let used = 0;
  for (const { segment, index } of segmenter.segment(text)) {
    const w = measureOf(segment);
    if (used + w > width) break;
    used += w;
    end = index + segment.length;
  }
  return { text: text.slice(0, end), width: used };
}

/** cutToWidth of text that simpleWidth measures: each UTF-16 unit is a character of its own. */
function cutSimple(text: string, width: number): { text: string; width: number } {
  let used = 0;
  let end = 0;
  for (; end < text.length; end++) {
    const w = simpleWidthOf(text.charCodeAt(end));
    if (used + w > width) break;
    used += w;
  }
  return { text: text.slice(0, end), width: used };
}
