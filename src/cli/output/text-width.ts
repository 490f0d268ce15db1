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

/** The columns `text` takes on a terminal. */
export function displayWidth(text: string): number {
  return ASCII.test(text) ? text.length : loaded()(text);
}

/**
 * The longest start of `text` that takes at most `width` columns, cut between grapheme
 * clusters (never inside an emoji sequence, a letter and its marks, or a surrogate pair),
 * with the columns it takes.
 */
export function cutToWidth(text: string, width: number): { text: string; width: number } {
  if (ASCII.test(text)) return { text: text.slice(0, Math.max(0, width)), width: Math.max(0, Math.min(width, text.length)) };
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
