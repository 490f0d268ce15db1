// The one place where the core's words become the CLI's: a core error names an option as the
// library spells it (`since`, `timeout`, `maxWait`) and says what would fix it as a code
// (`details.fix`); the CLI names its flags and commands instead.
import { profileFlag } from '../../core/config.js';
import { SgqError, toSgqError, type ErrorDetails, type Fix } from '../../core/errors.js';
import { unplacedFileError } from '../../fs/file-errors.js';

/** The flag of each option a core error may name. */
export const OPTION_FLAGS: Readonly<Record<string, string>> = {
  since: '--since',
  timeout: '--timeout',
  maxWait: '--max-wait',
  maxCredits: '--max-credits',
  maxPages: '--max-pages',
  limit: '--limit',
  page: '--page',
  parallel: '--parallel',
  retries: '--retries',
  key: '--key',
};

type Words = (d: ErrorDetails, hint: string | undefined) => string | undefined;

const flag = (d: ErrorDetails) => (d.option && OPTION_FLAGS[d.option]) ?? d.option ?? '';

/** The CLI's hint for each fix the core names. */
const HINTS: Record<Fix, Words> = {
  'raise-option': (d) => (d.option === 'timeout' ? 'raise --timeout, or try again later' : `try again later, or raise ${flag(d)}`),
  'set-option': (d) => `try again later, or let sgq wait for it with ${flag(d)} DURATION`,
  'see-answer': () => 'rerun with --verbose or --raw to see it',
  'check-address': () => 'check base-url; rerun with --verbose to see the request',
  'set-key': () => 'set one with `sgq config set api-key` (reads stdin) or SGQ_API_KEY',
  'check-key': (d) => {
    const p = d.profile === undefined ? '' : profileFlag(d.profile);
    return `check it with \`sgq config get api-key${p}\`; set a new one with \`sgq config set api-key${p}\``;
  },
  'create-profile': (d) => `create it with \`sgq config set base-url URL --profile ${d.profile}\``,
  'fix-setting': (d) => `fix it with \`sgq config set ${d.setting}${d.profile === undefined ? '' : profileFlag(d.profile)}\``,
  'name-key-field': (_, hint) => hint?.replace(/ as the key$/, ' with --key FIELD'),
  'report-bug': () => 'this is a bug in sgq; rerun with --verbose and report it',
};

/** The core's option names in a message, as the CLI's flags: `invalid since "x"` → `invalid --since "x"`. */
function flagsIn(message: string, option: string | undefined): string {
  const named = option && OPTION_FLAGS[option];
  if (!named) return message;
  return message.replace(new RegExp(`(^|[\\s(])${option}(?=[\\s:]|$)`), `$1${named}`);
}

/** An error in the CLI's words: its flags in the message, its commands in the hint. */
export function inCliWords(error: SgqError): SgqError {
  const { option, fix } = error.details;
  if (option === undefined && fix === undefined) return error;
  const message = flagsIn(error.message, option);
  const hint = fix ? (HINTS[fix](error.details, error.hint) ?? error.hint) : error.hint;
  if (message === error.message && hint === error.hint) return error;
  // The same class and fields (a CallError keeps its records), with the CLI's words.
  const worded = Object.create(Object.getPrototypeOf(error) as object) as SgqError;
  Object.assign(worded, error, { message, hint });
  Object.defineProperty(worded, 'stack', { value: error.stack, configurable: true, writable: true });
  return worded;
}

/** Anything thrown, as an SgqError in the CLI's words; a file-system error in the words of src/fs/file-errors.ts, never as a bug. */
export const cliError = (error: unknown): SgqError => inCliWords(unplacedFileError(error) ?? toSgqError(error));
