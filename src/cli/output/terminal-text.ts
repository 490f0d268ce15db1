import type { Format } from '../formats/formats.js';
import type { Sink } from './sink.js';
import { visible, visibleJson } from '../terminal/visible.js';

// Records shown on a terminal: what the service wrote in them is shown, never obeyed. The
// table, csv and tsv escape each cell themselves (visible.ts); the other outputs are escaped
// as they are written, here. Into a pipe or a file (`--out`) nothing is: the data stays
// exact, byte for byte.

/** What stdout shows, for choosing how it is escaped on a terminal. */
export interface Shown {
  format: Format;
  /** `--jq`: jq's results, strings raw, one a line. */
  jq?: boolean;
  /** `--raw`: the service's bodies as received (JSON), one a line. */
  raw?: boolean;
}

/**
 * How text written to a terminal is escaped, or undefined where the formatter escapes its
 * cells itself. --jq's raw strings keep their line breaks and tabs (jq -r prints them, and
 * `@tsv` separates with tabs: sgq cannot tell a string's from jq's); JSON and YAML text gets
 * JSON's escapes (`\u009b`) for what JSON leaves raw (DEL, C1, the separators, the
 * bidirectional marks), so a JSON value reads back the same.
 */
export function terminalEscape(shown: Shown): ((text: string) => string) | undefined {
  if (shown.jq) return (text) => visible(text, '\n\t');
  if (shown.raw) return (text) => visibleJson(text);
  switch (shown.format) {
    case 'table':
    case 'csv':
    case 'tsv':
    case 'parquet':
      return undefined;
    default:
      return (text) => visibleJson(text);
  }
}

/** `sink` with every chunk escaped by `escape` on its way (jq's bytes decoded as UTF-8 first). */
export function escapingSink(sink: Sink, escape: (text: string) => string): Sink {
  const decoder = new TextDecoder('utf-8');
  return {
    write(chunk) {
      sink.write(escape(typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true })));
    },
    drain: () => sink.drain(),
    finish: (ok) => sink.finish(ok),
    get closed() {
      return sink.closed;
    },
    get failure() {
      return sink.failure;
    },
    get streams() {
      return sink.streams;
    },
    get flushed() {
      return sink.flushed;
    },
    get delivered() {
      return sink.delivered;
    },
  };
}
