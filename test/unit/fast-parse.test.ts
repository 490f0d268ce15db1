import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Option } from 'commander';
import { commandDefinitions } from '../../src/cli/commands/index.js';
import type { CommandDefinition } from '../../src/cli/commands/define.js';
import { fastParse } from '../../src/cli/fast-parse.js';
import type { Io } from '../../src/cli/io.js';
import { buildProgram, globalOptions } from '../../src/cli/program.js';

// The fast parser must give exactly what Commander gives, or leave the line to Commander.

const io = (): Io => ({
  stdout: new PassThrough(),
  stderr: new PassThrough(),
  stdin: new PassThrough(),
  env: {},
  stdoutIsTTY: false,
  stderrIsTTY: false,
  stdinIsTTY: false,
});

interface Parsed {
  definition: CommandDefinition;
  args: string[];
  opts: Record<string, unknown>;
  globals: Record<string, unknown>;
}

/** What Commander's program gives the handler for `argv`, or undefined where it refuses the line. */
async function commander(argv: readonly string[]): Promise<Parsed | undefined> {
  const runs: Parsed[] = [];
  const program = buildProgram(io(), { exitCode: 0 }, async (definition, args, opts, globals) => {
    runs.push({ definition, args: [...args], opts: { ...opts }, globals: { ...globals } });
    return 0;
  });
  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch {
    return undefined;
  }
  expect(runs.length).toBeLessThanOrEqual(1);
  return runs[0];
}

/** A definition by what names it: its name, summary and help (a route's help names its whole command). */
const identity = (d: CommandDefinition) => ({ name: d.name, summary: d.summary, help: d.help, arguments: d.arguments });
/** Values with their keys in order, as Commander sets them. */
const ordered = (values: Record<string, unknown>) => Object.entries(values);

async function expectSame(argv: readonly string[]): Promise<boolean> {
  const fast = fastParse(argv, commandDefinitions(), globalOptions());
  if (fast === undefined) return false;
  const slow = await commander(argv);
  expect(slow, `Commander refused ${JSON.stringify(argv)}`).toBeDefined();
  expect(identity(fast.definition)).toEqual(identity(slow!.definition));
  expect(fast.args).toStrictEqual(slow!.args);
  expect(ordered(fast.opts)).toStrictEqual(ordered(slow!.opts));
  expect(ordered(fast.globals)).toStrictEqual(ordered(slow!.globals));
  return true;
}

const flagsOf = (options: readonly Option[]): string[] => options.flatMap((o) => [o.short, o.long].filter((f): f is string => f !== undefined));

/** Every command's path of words with its own flags, and every flag any command or the program has. */
function vocabulary(): { paths: { words: string[]; flags: string[] }[]; flags: string[] } {
  const paths: { words: string[]; flags: string[] }[] = [];
  const walk = (definitions: readonly CommandDefinition[], above: string[]) => {
    for (const d of definitions) {
      paths.push({ words: [...above, d.name], flags: flagsOf(d.options?.() ?? []) });
      if (d.subcommands) walk(d.subcommands(), [...above, d.name]);
    }
  };
  walk(commandDefinitions(), []);
  const flags = new Set([...paths.flatMap((p) => p.flags), ...flagsOf(globalOptions())]);
  return { paths, flags: [...flags] };
}

describe('fastParse', () => {
  it('takes plain route lines, with the values Commander gives', async () => {
    for (const argv of [
      ['graph', 'followers', 'alice', '-q'],
      ['--sandbox', 'graph', 'followers', 'alice', 'bob', '--all', '-o', 'csv', '--fields', 'username'],
      ['graph', '-v', 'following', 'alice', '--no-header', '--timeout=5', '--limit', '10', '--out', 'f.ndjson'],
      ['info', '--retries', '2'],
      ['graph', 'followers', '-', '--concurrency', '8', '--max-wait', '5m'],
    ]) {
      expect(await expectSame(argv), JSON.stringify(argv)).toBe(true);
    }
  });

  it('leaves to Commander what it is not sure of', () => {
    for (const argv of [
      [],
      ['--help'],
      ['help', 'graph'],
      ['graph', 'followers', 'alice', '-h'],
      ['graph', 'followers', '--', '-alice'],
      ['graph', 'followers', 'alice', '-qv'],
      ['graph', 'followers', 'alice', '--limit', '0'],
      ['graph', 'followers', 'alice', '--limit', '5', '--limit', '6'],
      ['graph', 'followers', 'alice', '--out', '-q'],
      ['graph', 'followers', 'alice', '--out'],
      ['graph', 'followers', 'alice', '--jq', '.a', '--fields', 'a'],
      ['graph', 'followers'],
      ['graph', '--all', 'followers', 'alice'],
      ['graph', 'nope', 'alice'],
      ['info', 'extra'],
      ['graph', 'followers', 'alice', '--quiet=1'],
      ['formats'],
    ]) {
      expect(fastParse(argv, commandDefinitions(), globalOptions()), JSON.stringify(argv)).toBeUndefined();
    }
  });

  it('gives what Commander gives for generated command lines, or defers', async () => {
    const { paths, flags } = vocabulary();
    const plain = ['alice', 'bob', '-', '5', '0', '', 'ndjson', 'csv', 'json', 'a,b', 'a,,b', '30s', '5m', '1h', 'x.ndjson', 'username', 'help', 'graph', 'followers'];
    const odd = ['-1', '--', '-h', '--bogus', '-x', '-qv', '-ocsv', '--out=', '--out=f', '--timeout=3', '--fields=a', '--quiet=1'];
    const word = fc.oneof({ arbitrary: fc.constantFrom(...plain), weight: 6 }, { arbitrary: fc.constantFrom(...odd), weight: 1 }, { arbitrary: fc.string({ maxLength: 4 }), weight: 1 });
    // Mostly words in the shapes people write (a flag, a flag and a value, a word), mostly the
    // command's own flags and the program's, sometimes anything.
    const tokens = (own: readonly string[], max: number) => {
      const flag = fc.oneof({ arbitrary: fc.constantFrom(...own, ...flagsOf(globalOptions())), weight: 4 }, { arbitrary: fc.constantFrom(...flags), weight: 1 });
      const token = fc.oneof(
        { arbitrary: fc.tuple(flag, word).map(([f, v]) => [f, v]), weight: 3 },
        { arbitrary: flag.map((f) => [f]), weight: 3 },
        { arbitrary: word.map((w) => [w]), weight: 3 },
        { arbitrary: fc.tuple(flag, word).map(([f, v]) => [`${f}=${v}`]), weight: 1 },
      );
      return fc.array(token, { maxLength: max }).map((t) => t.flat());
    };
    const line = fc.constantFrom(...paths).chain((path) => fc.tuple(tokens([], 2), fc.constant(path.words), tokens(path.flags, 6)));
    let taken = 0;
    await fc.assert(
      fc.asyncProperty(line, async ([before, path, after]) => {
        if (await expectSame([...before, ...path, ...after])) taken++;
      }),
      { numRuns: 6000 },
    );
    // A parser that always deferred would pass the property: it must take a good share.
    expect(taken).toBeGreaterThan(150);
  });
});
