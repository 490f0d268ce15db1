import type { Option } from 'commander';
import type { CommandDefinition } from './commands/define.js';

// A plain command line (`sgq graph followers alice -q`) parsed without building Commander's
// program: building and parsing it cost a one-page run about 1.5 ms of its ~40, and its code a
// good part of the code cache. The parser reads the same definitions the program is built from
// and gives exactly what Commander would give (test/unit/fast-parse.test.ts checks it against
// Commander on generated command lines). Anything it is not sure of (help, `--`, a repeated,
// unknown or combined option, a value that looks like an option, a bad value, a word that
// names no command) is left to Commander, which also writes every error.

export interface FastParse {
  definition: CommandDefinition;
  /** The command's words, as Commander gives them (`command.args`). */
  args: string[];
  /** The command's own options (`command.opts()`). */
  opts: Record<string, unknown>;
  /** Its options with the program's over them (`command.optsWithGlobals()`). */
  globals: Record<string, unknown>;
}

/** Words that always go to Commander: help, the version, the end of options, jq's two-word options. */
const COMMANDER_WORDS = new Set(['-h', '--help', '-V', '--version', '--', '--arg', '--argjson']);

/** The command and values `argv` gives, or undefined where Commander must decide. */
export function fastParse(argv: readonly string[], definitions: readonly CommandDefinition[], globalOptions: readonly Option[]): FastParse | undefined {
  if (argv.some((word) => COMMANDER_WORDS.has(word)) || !plainOptions(globalOptions)) return undefined;
  const scan = new Scan(globalOptions);
  let list: readonly CommandDefinition[] | undefined = definitions;
  let leaf: CommandDefinition | undefined;
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    if (isOptionWord(word)) {
      const taken = scan.option(word, argv[i + 1], leaf !== undefined);
      if (taken === undefined) return undefined;
      i += taken;
    } else if (leaf !== undefined) {
      scan.args.push(word);
    } else {
      const found: CommandDefinition | undefined = list?.find((d) => d.name === word);
      if (found === undefined) return undefined;
      if (found.subcommands) {
        // A command that only groups others (a namespace) takes no options of its own.
        if (found.options || found.handler) return undefined;
        list = found.subcommands();
      } else {
        if (!found.handler || !scan.enter(found.options?.() ?? [])) return undefined;
        leaf = found;
      }
    }
  }
  if (leaf === undefined || !argumentsFit(leaf, scan.args.length)) return undefined;
  return scan.result(leaf);
}

/** What Commander keeps on an option beyond its typings. */
type Parts = Option & { implied?: Record<string, unknown>; conflictsWith: string[] };

/** Commander's `option.is(flag)`. */
const named = (option: Option, flag: string): boolean => option.short === flag || option.long === flag;

/** Commander's test for a word that may be an option. */
const isOptionWord = (word: string): boolean => word.length > 1 && word[0] === '-';

/** Options whose every feature this parser follows (no env, implied, preset, optional or variadic values, no mandatory options). */
function plainOptions(options: readonly Option[]): boolean {
  return options.every((o) => !o.optional && !o.variadic && !o.mandatory && o.envVar === undefined && (o as Parts).implied === undefined && o.presetArg === undefined);
}

/** Whether `count` words fit the command's arguments (`<a>`, `[b]`, `<c...>`) as Commander counts them. */
function argumentsFit(definition: CommandDefinition, count: number): boolean {
  const names = (definition.arguments ?? []).map((a) => a.name);
  const required = names.filter((n) => n.startsWith('<')).length;
  const variadic = /\.\.\.[>\]]$/.test(names[names.length - 1] ?? '');
  return count >= required && (variadic || count <= names.length);
}

/** The options given so far: the program's (found anywhere, as Commander's program finds them) and the command's. */
class Scan {
  readonly args: string[] = [];
  private readonly given = { program: new Map<Option, unknown>(), command: new Map<Option, unknown>() };
  private commandOptions: readonly Option[] = [];

  constructor(private readonly globalOptions: readonly Option[]) {}

  enter(options: readonly Option[]): boolean {
    this.commandOptions = options;
    return plainOptions(options);
  }

  /** Takes the option `word` (with `next` as its value if it needs one): the words used, or undefined to defer. */
  option(word: string, next: string | undefined, inCommand: boolean): number | undefined {
    const eq = word.startsWith('--') ? word.indexOf('=') : -1;
    const flag = eq > 2 ? word.slice(0, eq) : word;
    const own = this.globalOptions.find((o) => named(o, flag));
    const option = own ?? (inCommand ? this.commandOptions.find((o) => named(o, flag)) : undefined);
    if (option === undefined) return undefined;
    const given = own ? this.given.program : this.given.command;
    if ([...given.keys()].some((o) => o.attributeName() === option.attributeName())) return undefined;
    if (!option.required) {
      if (flag !== word) return undefined;
      given.set(option, !option.negate);
      return 0;
    }
    const value = flag !== word ? word.slice(eq + 1) : next;
    if (value === undefined || (flag === word && isOptionWord(value))) return undefined;
    given.set(option, value);
    return flag === word ? 1 : 0;
  }

  result(definition: CommandDefinition): FastParse | undefined {
    const program = values(this.globalOptions, this.given.program);
    const opts = values(this.commandOptions, this.given.command);
    if (program === undefined || opts === undefined) return undefined;
    // optsWithGlobals: the command's, then the program's over them (a namespace has none).
    return { definition, args: this.args, opts, globals: Object.assign({}, opts, program) };
  }
}

/** A command's option values as Commander sets them: defaults in the options' order, then those given in the order given. */
function values(options: readonly Option[], given: Map<Option, unknown>): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  options.forEach((option, index) => {
    if (option.negate) {
      const positive = option.long!.replace(/^--no-/, '--');
      if (!options.slice(0, index).some((o) => named(o, positive))) out[option.attributeName()] = option.defaultValue ?? true;
    } else if (option.defaultValue !== undefined) {
      out[option.attributeName()] = option.defaultValue;
    }
  });
  for (const [option, value] of given) {
    const name = option.attributeName();
    if ((option as Parts).conflictsWith.some((other) => [...given.keys()].some((o) => o.attributeName() === other))) return undefined;
    if (!option.required) {
      out[name] = value;
      continue;
    }
    try {
      out[name] = option.parseArg ? option.parseArg(value as string, out[name]) : value;
    } catch {
      return undefined;
    }
  }
  return out;
}
