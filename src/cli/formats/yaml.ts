import type { JsonObject } from '../../core/classify.js';
import { RawNumber, type Json } from '../../core/json.js';
import type { Formatter } from './formatter.js';
import type { Sink } from '../output/sink.js';

// YAML written by hand rather than by the yaml package: records are JSON, so the block
// structure is a few lines, and what matters is every scalar, which yaml's stringify gets wrong
// for readers of YAML 1.1 (PyYAML, Ruby's Psych, Go's yaml.v2): it leaves `yes`, `on`, `007`,
// `1:20` and dates plain, writes C1 controls, NEL and U+2028 raw (PyYAML refuses the first
// and reads the others as line breaks), and has no way to write a number as it was sent.
// Each scalar is written so that a YAML 1.1 reader and a YAML 1.2 one both read back what a
// JSON reader reads from the NDJSON.

/** Strings a YAML 1.1 or 1.2 reader would take for a bool, a null, a merge key or a value, in any case. */
const WORDS = new Set(['y', 'n', 'yes', 'no', 'on', 'off', 'true', 'false', 'null', '~', '=', '<<']);
// Every YAML number, date and timestamp starts with a digit after an optional sign or dot
// (`.5`, `-1_000`, `0x1F`, `1:20`, `2024-01-01`), or is an infinity or NaN (`.inf`, `-.NaN`).
const NUMBER_LIKE = /^[-+]?(?:\.?[0-9_]|\.(?:inf|nan)$)/i;
// A plain scalar starts with none of YAML's indicators (nor `.`, which starts `...`), holds
// nothing a reader escapes or breaks a line at, no tab, no `: ` or ` #`, and no flow
// indicators (harmless in block context to a YAML 1.2 reader, not to every 1.1 one).
const PLAIN = /^(?![-?:,[\]{}#&*!|>'"%@`.~\s])(?!.*(?:: |\s#|:$|\s$))[^\p{Cc}\u2028\u2029\ufeff\ufffe\uffff\p{Surrogate}[\]{},]+$/u;

/** Whether `text` can be written without quotes and read back as this same string. */
function plainSafe(text: string): boolean {
  return PLAIN.test(text) && !WORDS.has(text.toLowerCase()) && !NUMBER_LIKE.test(text);
}

const SHORT: Record<string, string> = { '\0': '\\0', '\x07': '\\a', '\b': '\\b', '\t': '\\t', '\n': '\\n', '\v': '\\v', '\f': '\\f', '\r': '\\r', '\x1b': '\\e', '"': '\\"', '\\': '\\\\' };
// What a double-quoted scalar writes as an escape: what a reader would refuse (controls,
// noncharacters, lone surrogates), fold (line breaks, NEL, U+2028/9) or drop (a BOM).
const ESCAPED = /["\\\p{Cc}\u2028\u2029\ufeff\ufffe\uffff\p{Surrogate}]/gu;
const hex = (c: string, digits: number) => c.codePointAt(0)!.toString(16).padStart(digits, '0');
const escapeChar = (c: string): string => SHORT[c] ?? (c.length === 1 && c <= '\xff' ? `\\x${hex(c, 2)}` : `\\u${hex(c, 4)}`);

/** A string as a scalar: plain when that reads back the same, else double-quoted on one line. */
function yamlString(text: string): string {
  return plainSafe(text) ? text : `"${text.replace(ESCAPED, escapeChar)}"`;
}

const JSON_NUMBER = /^(-?\d+)(?:\.(\d+))?(?:([eE])([-+]?)(\d+))?$/;

/**
 * A number as it was sent. JSON's exponent forms (`1E400`, `1e5`, `2.5e-3`) are written with
 * a fraction and a signed exponent (`1.0E+400`): YAML 1.1 reads an exponent only in that
 * form and would otherwise take the number for a string. The decimal value is unchanged.
 */
function yamlNumber(text: string): string {
  const m = JSON_NUMBER.exec(text);
  if (!m) return text;
  const [, whole, fraction, e, sign, exponent] = m;
  return e === undefined ? text : `${whole}.${fraction ?? '0'}${e}${sign || '+'}${exponent}`;
}

function scalar(value: Json): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return yamlString(value);
  if (typeof value === 'boolean') return String(value);
  if (value instanceof RawNumber) return yamlNumber(value.text);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return Number.isNaN(value) ? '.nan' : value > 0 ? '.inf' : '-.inf';
    // A -0 sent by the service arrives as a RawNumber; a JS -0 is written as JSON writes it, 0.
    return yamlNumber(String(value));
  }
  return Array.isArray(value) ? '[]' : '{}';
}

const isBlock = (value: Json): value is Json[] | { [key: string]: Json } =>
  value !== null && typeof value === 'object' && !(value instanceof RawNumber) && (Array.isArray(value) ? value.length > 0 : Object.keys(value).length > 0);

// PyYAML finds a key's `:` only within 1,024 characters; a longer key is written explicitly (`? key`).
const LONG_KEY = 1000;

/** The lines of a non-empty mapping or sequence at `indent` spaces, each ending in a line break. */
function block(value: Json[] | { [key: string]: Json }, indent: string): string {
  let out = '';
  if (Array.isArray(value)) {
    for (const item of value) {
      // A nested block starts on the dash's line: `- a: 1` / `  b: 2`, `- - x`.
      out += isBlock(item) ? `${indent}- ${block(item, `${indent}  `).slice(indent.length + 2)}` : `${indent}- ${scalar(item)}\n`;
    }
    return out;
  }
  for (const key of Object.keys(value)) {
    const item = value[key];
    if (item === undefined) continue; // left out, as JSON.stringify leaves it out
    const name = yamlString(key);
    out += name.length > LONG_KEY ? `${indent}? ${name}\n${indent}:` : `${indent}${name}:`;
    out += isBlock(item) ? `\n${block(item, `${indent}  `)}` : ` ${scalar(item)}\n`;
  }
  return out;
}

/** One record as a YAML document, opened by `---`. */
function yamlDocument(record: JsonObject): string {
  return isBlock(record) ? `---\n${block(record, '')}` : '--- {}\n';
}

/** One record as an item of a top-level sequence: `- key: value`, its other keys indented under it. */
function yamlItem(record: JsonObject): string {
  return isBlock(record) ? `- ${block(record, '  ').slice(2)}` : '- {}\n';
}

/**
 * `-o yaml`: one document, the sequence of every record, written record by record as pages
 * arrive (a reader's `safe_load` takes the whole output); `[]` when there is none.
 */
export function yamlFormatter(sink: Sink): Formatter {
  let empty = true;
  return {
    write(records: readonly JsonObject[]) {
      if (records.length === 0) return;
      let out = '';
      for (const r of records) out += yamlItem(r);
      empty = false;
      sink.write(out);
    },
    end() {
      if (empty) sink.write('[]\n');
    },
  };
}

/** `-o yaml-stream`: one document per record, each opened by `---` (a reader's `safe_load_all`). */
export function yamlStreamFormatter(sink: Sink): Formatter {
  return {
    write(records: readonly JsonObject[]) {
      if (records.length === 0) return;
      let out = '';
      for (const r of records) out += yamlDocument(r);
      sink.write(out);
    },
    end() {},
  };
}
