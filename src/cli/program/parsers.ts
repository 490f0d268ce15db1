import { InvalidArgumentError } from 'commander';
import { durationMs } from '../../core/since.js';
import * as values from '../../core/values.js';

// Argument parsers for Commander: each one rejects a bad value before any request is sent,
// which Commander reports as a usage error (exit 2). Each is tagged with the JSON type of
// what it returns, for `sgq describe`.

export type ValueType = 'integer' | 'number' | 'string' | 'string[]';

const typed = <T extends (value: string) => unknown>(type: ValueType, parse: T): T => Object.assign(parse, { valueType: type });

/** The type a parser was tagged with; plain strings otherwise. */
export const valueTypeOf = (parse: unknown): ValueType | undefined => (parse as { valueType?: ValueType } | undefined)?.valueType;

/** A rule of the core (shared with the settings), reported as Commander reports a bad value. */
const flagRule = <R>(rule: (value: string) => R) => (value: string): R => {
  try {
    return rule(value);
  } catch (error) {
    throw error instanceof values.ValueError ? new InvalidArgumentError(error.message) : error;
  }
};

export const positiveInt = (name: string, max?: number) => typed('integer', flagRule(values.positiveInt(name, max)));
export const nonNegativeInt = (name: string, max?: number) => typed('integer', flagRule(values.nonNegativeInt(name, max)));
export const positiveSeconds = typed('number', flagRule(values.positiveSeconds));

/** `--fields a,b`: non-empty names, no duplicates, order kept. */
export const fieldList = typed('string[]', (value: string): string[] => {
  const fields = value.split(',').map((f) => f.trim());
  if (fields.some((f) => f === '')) throw new InvalidArgumentError('Give field names separated by commas, such as username,last_checked.');
  if (new Set(fields).size !== fields.length) throw new InvalidArgumentError('A field is named twice.');
  return fields;
});

export function nonEmpty(name: string) {
  return (value: string): string => {
    if (value.trim() === '') throw new InvalidArgumentError(`${name} must not be empty.`);
    return value;
  };
}

export const fraction = typed('number', (value: string): number => {
  const n = Number(value);
  if (value.trim() === '' || !(n >= 0 && n <= 1)) throw new InvalidArgumentError('Use a fraction from 0 to 1, such as 0.2.');
  return n;
});

export const httpStatus = typed('integer', (value: string): number => {
  if (!/^[1-5]\d\d$/.test(value.trim())) throw new InvalidArgumentError('Use an HTTP status from 100 to 599.');
  return Number(value);
});

/** `--wait-lock 30s`: a duration with its unit (s, m, h), kept with the text for messages. */
export function waitDuration(value: string): { ms: number; text: string } {
  const ms = durationMs(value);
  if (ms === undefined || ms > 24 * 3600e3) throw new InvalidArgumentError('Use a duration such as 30s, 5m or 1h (at most 24h).');
  return { ms, text: value.trim() };
}

// `--arg NAME VALUE` and `--argjson NAME JSON` take two words, which Commander cannot: main
// joins the two into one word with a NUL between them, a character no argument can hold.
const PAIRED_OPTIONS = new Set(['--arg', '--argjson']);
const PAIR_SEPARATOR = '\0';

/** The arguments with the two words after each `--arg` and `--argjson` joined into one (before `--`). */
export function joinPairedOptions(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    out.push(word);
    if (word === '--') return [...out, ...argv.slice(i + 1)];
    if (PAIRED_OPTIONS.has(word) && i + 2 < argv.length) {
      out.push(`${argv[i + 1]!}${PAIR_SEPARATOR}${argv[i + 2]!}`);
      i += 2;
    }
  }
  return out;
}

/** `--arg NAME VALUE` (`json`: `--argjson NAME JSON`), collected in the order given. */
export function namedValue(option: string, json: boolean) {
  return typed('string[]', (word: string, previous: [string, string][] = []): [string, string][] => {
    const at = word.indexOf(PAIR_SEPARATOR);
    if (at === -1) throw new InvalidArgumentError(`Give a name and a value: ${option} NAME ${json ? 'JSON' : 'VALUE'}.`);
    const name = word.slice(0, at);
    const value = word.slice(at + 1);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new InvalidArgumentError(`${JSON.stringify(name)} is not a jq variable name (letters, digits and _).`);
    if (json) {
      try {
        JSON.parse(value);
      } catch {
        throw new InvalidArgumentError(`the value of $${name} is not JSON: ${value}`);
      }
    }
    return [...previous, [name, value]];
  });
}

/** `--cache 1h`: how long an answer is reused (s, m, h, d, w). */
export function cacheTtl(value: string): { ms: number; text: string } {
  const ms = durationMs(value);
  if (!(Number(ms) > 0)) throw new InvalidArgumentError('Use a duration such as 30m, 1h or 7d.');
  return { ms: ms!, text: value.trim() };
}

/** `--notify URL`: checked as the notify setting is, its words never repeating the URL (a secret). */
export const notifyUrl = typed('string', (value: string): string => {
  try {
    return values.notifyAddress(value);
  } catch (error) {
    throw error instanceof values.ValueError ? new InvalidArgumentError(error.message) : error;
  }
});
