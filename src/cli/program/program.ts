import { Command } from 'commander';
import type { Io } from '../start/io.js';
import { visible } from '../terminal/visible.js';
import { globalOptions } from './global-options.js';
import { VERSION } from '../../core/version.js';
import { createContext, type GlobalOptions } from './context.js';
import { apiCommand } from '../commands/api/definition.js';
import { cacheCommand } from '../commands/cache/definition.js';
import { completionCommand } from '../commands/completion/definition.js';
import { configCommand } from '../commands/config/definition.js';
import { creditsCommand } from '../commands/credits/definition.js';
import { describeCommand } from '../commands/describe/definition.js';
import { datasetCommand } from '../commands/dataset/definition.js';
import { diffCommand } from '../commands/diff/definition.js';
import { fmtCommand } from '../commands/fmt/definition.js';
import { historyCommand } from '../commands/history/definition.js';
import { routeCommands } from '../commands/routes/definition.js';
import { sandboxCommand } from '../commands/sandbox/definition.js';
import { snapshotsCommand } from '../commands/snapshots/definition.js';
import { helpText, type CommandDefinition } from './define.js';
import { helpLayout, setHelpAfter } from '../help/help-layout.js';
import { HELP_TOPICS, type HelpTopic } from '../help/topics.js';

// The command tree, built from the command definitions (src/cli/commands/). Only Commander, the
// route table and the definitions load at start-up; each handler imports what it runs, so
// `sgq --help` never loads the network stack.

export type { CommandContext, GlobalOptions } from './context.js';
export { globalOptions } from './global-options.js';

type State = { exitCode: number };

/** Runs a command's handler with what was parsed (a test may watch instead). */
export type RunCommand = (definition: CommandDefinition, args: string[], opts: Record<string, unknown>, globals: Record<string, unknown>) => Promise<number>;

export function buildProgram(io: Io, state: State, run?: RunCommand): Command {
  const program = rootCommand(io);
  const tree = () => {
    fillAll(program);
    return program;
  };
  const runCommand: RunCommand = run ?? (async (definition, args, opts, globals) => definition.handler!(args, opts, createContext(io, globals as GlobalOptions, tree)));
  const add = (parent: Command, definition: CommandDefinition): void => {
    const cmd = parent.command(definition.name).description(definition.summary);
    for (const arg of definition.arguments ?? []) cmd.argument(arg.name, arg.description);
    if (definition.usage) cmd.usage(definition.usage);
    if (definition.handler) {
      cmd.action(async (...args: unknown[]) => {
        const c = args[args.length - 1] as Command;
        state.exitCode = await runCommand(definition, c.args, c.opts(), c.optsWithGlobals());
      });
    }
    // Options, subcommands and help are built once, when the command is entered or a help
    // lists it: a run builds only its own command's options.
    if (definition.options) listedWithOptions.add(cmd);
    defer(cmd, () => {
      for (const option of definition.options?.() ?? []) cmd.addOption(option);
      for (const sub of definition.subcommands?.() ?? []) add(cmd, sub);
      if (definition.help) setHelpAfter(cmd, definition.help);
    });
    watch(cmd);
  };
  for (const definition of commandDefinitions()) add(program, definition);
  for (const topic of HELP_TOPICS) addTopic(program, topic);
  watch(program);
  return program;
}

/**
 * A help topic is a hidden command (as in gh), so `sgq help formats` finds it the way it
 * finds a command; its help, and its run, print the topic.
 */
function addTopic(program: Command, topic: HelpTopic): void {
  const cmd = program.command(topic.name, { hidden: true }).description(topic.summary);
  cmd.configureHelp({ ...helpLayout(), formatHelp: (_cmd, helper) => topic.render(helper) });
  cmd.action(() => cmd.outputHelp());
}

/** `sgq graph followers` for the help of that command (`sgq` for the root). */
const commandLine = (cmd: Command): string => (cmd.parent ? `${commandLine(cmd.parent)} ${cmd.name()}` : cmd.name());

/**
 * The command the words name, as far as they name one: `graph followers jack --bogus` is
 * `graph followers`, `graph nope` is `graph`. Commander reports an option of `sgq` given
 * after the command (`graph followers --timeout x`) from `sgq` itself, so its errors look here.
 */
function typedCommand(root: Command, words: readonly string[]): Command {
  let cmd = root;
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    if (word === '--') break;
    if (word.startsWith('-')) {
      const option = [cmd, ...ancestors(cmd)].flatMap((c) => c.options).find((o) => o.short === word || o.long === word);
      if (option && (option.required || option.optional) && !word.includes('=')) i++;
      continue;
    }
    const sub = cmd.commands.find((c) => c.name() === word);
    if (!sub) {
      if (cmd.commands.length) break;
      continue;
    }
    fill(sub);
    cmd = sub;
  }
  return cmd;
}

/** The words given to parse (Commander keeps them as `rawArgs`, which its typings leave out). */
const argvOf = (program: Command): readonly string[] => (program as Command & { rawArgs?: string[] }).rawArgs ?? [];

const ancestors = (cmd: Command): Command[] => (cmd.parent ? [cmd.parent, ...ancestors(cmd.parent)] : []);

function rootCommand(io: Io): Command {
  const program: Command = new Command('sgq')
    .description('Query the Social Graph and Metadata Query Service: followers, following, scores, metadata, posts and lists.')
    .version(VERSION, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help');
  for (const option of globalOptions()) program.addOption(option);
  program
    .showSuggestionAfterError(true)
    .configureHelp(helpLayout())
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      // Help fits the terminal it goes to and is 80 columns into a pipe or a file, as the Io
      // says (not process.stdout).
      getOutHelpWidth: () => (io.stdoutIsTTY ? (io.stdout as { columns?: number }).columns : undefined) ?? 80,
      getErrHelpWidth: () => (io.stderrIsTTY ? (io.stderr as { columns?: number }).columns : undefined) ?? 80,
      // Commander's own errors become one line in sgq's voice, with the help of the command
      // that was typed. One line: the suggestion joins it, and a closing full stop does not meet the `;`.
      outputError: (text, write) =>
        write(`sgq: ${visible(`${oneLine(text.replace(/^error: /, ''))}; see \`${commandLine(typedCommand(program, argvOf(program)))} --help\``)}\n`),
    });
  setHelpAfter(
    program,
    helpText({
      examples: [
        'sgq --sandbox graph followers jack --all -o ndjson | jq -r .follower_username',
        'sgq config set base-url https://api.example.com',
        'sgq config set api-key                 # reads the key from stdin, stays out of history',
        'sgq graph followers jack --all --out jack-followers.ndjson',
        'sgq metadata userid jack dorsey -o csv',
      ],
      footer: topicList(),
    }),
  );
  return program;
}

/** The topics `sgq help` knows, as the root's help lists them. */
function topicList(): string {
  const terms = HELP_TOPICS.map((t) => `sgq help ${t.name}`);
  const width = Math.max(...terms.map((t) => t.length));
  return ['Help topics:', ...HELP_TOPICS.map((t, i) => `  ${terms[i]!.padEnd(width)}  ${t.summary}`)].join('\n');
}

// Deferred parts of the tree: a command's builder runs once, when the command is about to
// parse or show its help, or when completions walk the whole tree.
const fillers = new WeakMap<Command, () => void>();
/** Commands that have options: a help that lists them shows `[options]`, so it builds them. */
const listedWithOptions = new WeakSet<Command>();

function defer(cmd: Command, build: () => void): void {
  fillers.set(cmd, build);
}

function fill(cmd: Command): void {
  const build = fillers.get(cmd);
  if (!build) return;
  fillers.delete(cmd);
  build();
}

/**
 * A command is filled before it parses (entered from its parent) and before its help, which
 * lists its subcommands with `[options]` where they have some, so those are filled too (also
 * for `sgq help graph`, which shows a help without entering the command).
 */
function watch(cmd: Command): void {
  cmd.hook('preSubcommand', (_cmd, sub) => fill(sub));
  cmd.on('beforeHelp', () => {
    fill(cmd);
    for (const sub of cmd.commands) if (listedWithOptions.has(sub)) fill(sub);
  });
}

/** Builds every deferred command below `cmd`, for code that walks the whole tree. */
export function fillAll(cmd: Command): void {
  fill(cmd);
  for (const sub of cmd.commands) fillAll(sub);
}

function oneLine(text: string): string {
  return text.trim().replace(/\s*\n\s*/g, ' ').replace('(Did you mean', '(did you mean').replace(/\.$/, '');
}

export function allCommands(root: Command): Command[] {
  return [root, ...root.commands.flatMap((c) => allCommands(c))];
}

/** Every command of sgq, in the order the help lists them: the routes first. */
function commandDefinitions(): CommandDefinition[] {
  return [...routeCommands(), apiCommand, configCommand, creditsCommand, cacheCommand, sandboxCommand, diffCommand, historyCommand, snapshotsCommand, datasetCommand, fmtCommand, describeCommand, completionCommand];
}
