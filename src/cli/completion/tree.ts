import type { Argument, Command, Option } from 'commander';
import { SETTING_NAMES } from '../../core/config.js';
import { valueTypeOf, type ValueType } from '../program/parsers.js';
import { valueDescriptions } from '../help/value-meanings.js';
import { inherited } from '../help/help-layout.js';

// What a completion script needs to know about the command tree, read from Commander's own
// objects. The three generators (bash, zsh, fish) only ever see this model, so a new command,
// flag or choice reaches every shell without touching them.

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

export const isShell = (name: string): name is Shell => (SHELLS as readonly string[]).includes(name);

/** How the value of an option or argument completes. */
export type ValueSource =
  /** A fixed list, such as the formats of `-o`, with what each means where a table says. */
  | { kind: 'words'; words: readonly string[]; descriptions?: Readonly<Record<string, string>> }
  /** The profile names in the config store, read when the user presses TAB. */
  | { kind: 'profiles' }
  /** File names. */
  | { kind: 'files' }
  /** Anything; the shell offers nothing. */
  | { kind: 'any' };

export interface OptionSpec {
  /** `-o`, or undefined. */
  short?: string;
  /** `--output`, or undefined. */
  long?: string;
  /** The flags as declared: `-o, --output <format>`, `--arg <name> <value>`. */
  flags: string;
  description: string;
  /** Whether the option reads a value (`<x>` or `[x]` in its flags). */
  takesValue: boolean;
  /** The value may be left out (`[x]` in its flags). */
  optionalValue: boolean;
  /** The name in the brackets of the flags (`format` for `--output <format>`). */
  valueName: string;
  values: ValueSource;
  /** Accepted more than once (its default is a list, as for `-f` of `sgq api`). */
  repeatable: boolean;
  /** The JSON type of the parsed value, for `sgq describe`. */
  type: 'boolean' | ValueType;
  /** The default Commander applies, where there is one. */
  defaultValue?: unknown;
}

export interface ArgumentSpec {
  name: string;
  description: string;
  required: boolean;
  variadic: boolean;
  values: ValueSource;
}

export interface CommandSpec {
  /** Names from below the root, such as ['graph', 'followers']; [] for the root. */
  path: string[];
  name: string;
  description: string;
  /** The command's own options, without the global ones. */
  options: OptionSpec[];
  arguments: ArgumentSpec[];
  subcommands: CommandSpec[];
}

export interface CompletionTree {
  /** The program name the scripts register for. */
  program: string;
  root: CommandSpec;
  /**
   * The options every command inherits from the root: Commander accepts them before and after
   * any subcommand. The root's own options (`--version`) stay in `root.options`.
   */
  globals: OptionSpec[];
}


/** Every command of the tree, root first, parents before children, in registration order. */
export function walk(spec: CommandSpec): CommandSpec[] {
  return [spec, ...spec.subcommands.flatMap(walk)];
}

/** The option words (`-o`, `--output`) of an option. */
export const optionWords = (o: OptionSpec): string[] => [o.short, o.long].filter((w): w is string => w !== undefined);

/** Reads the model from a Commander tree. Hidden commands and options are left out. */
export function completionTree(root: Command): CompletionTree {
  const rootSpec = commandSpec(root, []);
  const rootOnly = (o: OptionSpec) => !inherited(o);
  const globals = rootSpec.options.filter((o) => !rootOnly(o));
  const globalWords = new Set(globals.flatMap(optionWords));
  // Each subcommand has its own -h, --help; the root's covers them, so list it once.
  for (const spec of walk(rootSpec).slice(1)) {
    spec.options = spec.options.filter((o) => !optionWords(o).some((w) => globalWords.has(w)));
  }
  rootSpec.options = rootSpec.options.filter(rootOnly);
  return { program: root.name(), root: rootSpec, globals };
}

function commandSpec(cmd: Command, path: string[]): CommandSpec {
  const help = cmd.createHelp();
  // visibleCommands adds Commander's implicit `help` command; only the registered ones count.
  const subcommands = help.visibleCommands(cmd).filter((c) => cmd.commands.includes(c));
  return {
    path,
    name: cmd.name(),
    description: oneLine(cmd.description()),
    options: help.visibleOptions(cmd).map((o) => optionSpec(o, path)),
    arguments: cmd.registeredArguments.map((a) => argumentSpec(a, path)),
    subcommands: subcommands.map((c) => commandSpec(c, [...path, c.name()])),
  };
}

function optionSpec(option: Option, path: string[]): OptionSpec {
  const takesValue = option.required || option.optional;
  const valueName = /[<[]([^>\]]+?)(?:\.\.\.)?[>\]]/.exec(option.flags)?.[1] ?? '';
  const repeatable = Array.isArray(option.defaultValue) || option.variadic;
  return {
    ...(option.short ? { short: option.short } : {}),
    ...(option.long ? { long: option.long } : {}),
    flags: option.flags,
    description: oneLine(option.description),
    takesValue,
    optionalValue: option.optional,
    valueName,
    values: takesValue ? optionValues(option, path, valueName) : { kind: 'any' },
    repeatable,
    type: !takesValue ? 'boolean' : repeatable ? 'string[]' : (valueTypeOf(option.parseArg) ?? 'string'),
    ...(option.defaultValue !== undefined && !(Array.isArray(option.defaultValue) && option.defaultValue.length === 0) ? { defaultValue: option.defaultValue } : {}),
  };
}

function argumentSpec(argument: Argument, path: string[]): ArgumentSpec {
  return {
    name: argument.name(),
    description: oneLine(argument.description),
    required: argument.required,
    variadic: argument.variadic,
    values: argumentValues(argument, path),
  };
}

// The few values Commander cannot know: they live outside the tree (the config store, the
// setting names) or are checked by the action rather than by `.choices()`.

/** A fixed list of values, described where a table of src/cli/help/value-meanings.ts knows them all. */
function words(list: readonly string[]): ValueSource {
  const descriptions = valueDescriptions(list);
  return descriptions ? { kind: 'words', words: list, descriptions } : { kind: 'words', words: list };
}

function optionValues(option: Option, path: string[], valueName: string): ValueSource {
  if (option.argChoices) return words(option.argChoices);
  if (path.length === 0 && option.attributeName() === 'profile') return { kind: 'profiles' };
  if (valueName === 'file') return { kind: 'files' };
  return { kind: 'any' };
}

function argumentValues(argument: Argument, path: string[]): ValueSource {
  if (argument.argChoices) return words(argument.argChoices);
  if (path[0] === 'config' && argument.name() === 'key') return words(SETTING_NAMES);
  if (path.length === 1 && path[0] === 'completion' && argument.name() === 'shell') return words(SHELLS);
  if (argument.name() === 'file') return { kind: 'files' };
  return { kind: 'any' };
}

const oneLine = (text: string): string => text.replace(/\s+/g, ' ').trim();

/** Words the scripts embed without quoting; anything else is a bug in the tree, caught here. */
export function checkWord(word: string): string {
  if (!/^[A-Za-z0-9_.,@%+\-/]+$/.test(word)) throw new Error(`cannot complete ${JSON.stringify(word)}: use letters, digits and - _ . , @ % + /`);
  return word;
}

/** A command's path as the scripts key it: its checked words joined by spaces (`graph followers`). */
export const commandKey = (c: CommandSpec): string => c.path.map(checkWord).join(' ');

/** The program name as a shell function name. */
export const identifier = (name: string): string => name.replace(/[^A-Za-z0-9_]/g, '_');

/** Single-quotes a word for bash and zsh. */
export const posixQuote = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`;
