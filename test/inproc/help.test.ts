import { describe, expect, it } from 'vitest';
import { allCommands, buildProgram, fillAll } from '../../src/cli/program/program.js';
import { runSgq } from '../helpers/run.js';
import { HELP_TOPICS } from '../../src/cli/help/topics.js';
import { PassThrough } from 'node:stream';
import { ROUTES, commandName } from '../../src/core/routes.js';

function commandPaths(): string[][] {
  const sink = new PassThrough();
  const program = buildProgram({ stdout: sink, stderr: sink, stdin: sink, env: {}, stdoutIsTTY: false, stderrIsTTY: false, stdinIsTTY: false }, { exitCode: 0 });
  fillAll(program);
  const path = (cmd: (typeof program.commands)[number]): string[] => (cmd.parent ? [...path(cmd.parent), cmd.name()] : []);
  const topics = new Set(HELP_TOPICS.map((t) => t.name));
  return allCommands(program).map(path).filter((p) => p.length > 0 && p[p.length - 1] !== 'help' && !topics.has(p[0]!));
}

describe('--help', () => {
  it.each(commandPaths().map((p) => [p.join(' '), p] as const))('sgq %s --help shows examples and exits 0', async (_name, path) => {
    const r = await runSgq([...path, '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Usage: sgq ${path.join(' ')}`);
    expect(r.stdout).toContain('Examples:');
  });

  it('builds a namespace on demand for `sgq help <namespace>`', async () => {
    const r = await runSgq(['help', 'graph']);
    expect(r.stdout).toContain('followers');
    expect(r.stdout).toContain('following');
  });

  it('builds deferred options before parsing them', async () => {
    const r = await runSgq(['sandbox', '--port', 'x']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--port');
    const c = await runSgq(['config', 'nope']);
    expect(c.code).toBe(2);
    expect(c.stderr).toContain("unknown command 'nope'");
  });
});

describe("a route's examples", () => {
  it('are its own: each runs the route, and no two routes show the same fields', async () => {
    const seen = new Map<string, string>();
    for (const route of ROUTES) {
      const name = commandName(route);
      const help = (await runSgq([...name.split(' '), '--help'])).stdout;
      const part = help.slice(help.indexOf('Examples:'));
      const examples = part.split('\n').filter((l) => l.startsWith('  $ '));
      expect(examples.length, name).toBeGreaterThanOrEqual(2);
      for (const e of examples) expect(`${e} `, name).toContain(`sgq ${name} `);
      const fields = [...part.matchAll(/--fields \\?\s*(\S+)/g)].map((m) => m[1]!).join(' ');
      if (fields && !route.placeholder) {
        expect(seen.get(fields), `${name} shows the --fields of ${seen.get(fields)}`).toBeUndefined();
        seen.set(fields, name);
      }
    }
  });
});

describe('help of a namespace, however it is asked for', () => {
  it.each(['graph', 'alpha', 'metadata', 'lists'])('`sgq help %s` is `sgq %s --help`, listing each verb with its arguments', async (ns) => {
    const [byCommand, byFlag] = [await runSgq(['help', ns]), await runSgq([ns, '--help'])];
    expect(byCommand.stdout).toBe(byFlag.stdout);
    expect(byFlag.stdout).toMatch(/\[options\] <(user|list)/);
  });
});

/** A terminal of `columns` for the help (Commander fits help to stdout's columns at a terminal). */
const terminal = (columns: number) => ({ stdoutIsTTY: true, stdout: Object.assign(new PassThrough(), { columns }) });

describe('help as gh writes it', () => {
  it('`sgq help WORD` for no command or topic is one usage line, not the whole help', async () => {
    const r = await runSgq(['help', 'nope']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('sgq: no help for "nope": it is neither a command nor a help topic; see `sgq --help` for both\n');
    for (const known of [['help', 'graph'], ['help', 'exit-codes'], ['help', 'graph', 'followers'], ['help', 'help']]) expect((await runSgq(known)).code).toBe(0);
  });

  it('every command lists the options it inherits from sgq (not --version), and sgq itself lists none', async () => {
    const described = JSON.parse((await runSgq(['describe', '--json'])).stdout) as { global_options: { flags: string; name: string }[] };
    // -h, --help is each command's own; --version is sgq's alone.
    const inherited = described.global_options.filter((o) => o.name !== '--version' && o.name !== '--help');
    expect(inherited.map((o) => o.name)).toEqual(expect.arrayContaining(['--profile', '--sandbox', '--verbose', '--timeout', '--quiet', '--retries', '--base-url']));
    for (const path of commandPaths()) {
      const help = (await runSgq([...path, '--help'])).stdout;
      const section = help.split('\nInherited options:\n')[1]?.split('\n\n')[0];
      expect(section, path.join(' ')).toBeDefined();
      for (const o of inherited) expect(section, `${path.join(' ')}: ${o.flags}`).toMatch(new RegExp(`^  ${o.flags.replace(/[[\]<>.-]/g, '\\$&')}(?: |$)`, 'm'));
      expect(section).not.toContain('--version');
    }
    expect((await runSgq(['--help'])).stdout).not.toContain('Inherited options:');
  });

  it.each([
    [['graph', 'followers', '--bogus'], "unknown option '--bogus'", 'sgq graph followers'],
    [['graph', 'followers', 'jack', '--timeout', 'x'], "'x' is invalid", 'sgq graph followers'],
    [['--timeout', 'x', 'graph', 'followers', 'jack'], "'x' is invalid", 'sgq graph followers'],
    [['--profile', 'graph', 'graph', 'nope'], "unknown command 'nope'", 'sgq graph'],
    [['graph', 'followers'], "missing required argument 'user'", 'sgq graph followers'],
    [['config', 'list', '-o', 'yaml'], "'yaml' is invalid", 'sgq config list'],
    [['config', 'get'], "missing required argument 'key'", 'sgq config get'],
    [['metadata', 'tweets', 'jack', '--limit', '0'], '--limit', 'sgq metadata tweets'],
    [['nope'], "unknown command 'nope'", 'sgq'],
  ])('sgq %j: one line naming the help of the command typed', async (argv, what, command) => {
    const r = await runSgq(argv, { env: { SGQ_BASE_URL: 'http://127.0.0.1:9' } });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^sgq: [^\n]*\n$/);
    expect(r.stderr).toContain(what);
    expect(r.stderr.trimEnd().endsWith(`; see \`${command} --help\``)).toBe(true);
  });

  it("a command's own usage error says what to do, not where the help is", async () => {
    const r = await runSgq(['config', 'set', 'nope', 'x']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^sgq: unknown setting "nope"; use one of api-key, [^\n]*\n$/);
    expect(r.stderr).not.toContain('--help');
  });

  it.each([80, 200])('at %i columns no line is wider than the terminal and examples break only between words', async (columns) => {
    for (const path of [[], ...commandPaths()]) {
      const r = await runSgq([...path, '--help'], terminal(columns));
      const lines = r.stdout.split('\n');
      for (const line of lines) expect(line.length, `${path.join(' ')}: ${line}`).toBeLessThanOrEqual(columns);
      // A cut example ends in ` \` and goes on, indented, on the next line.
      lines.forEach((line, i) => {
        if (line.endsWith(' \\')) expect(lines[i + 1], path.join(' ')).toMatch(/^ {6}\S/);
      });
    }
    const api = (await runSgq(['api', '--help'], terminal(columns))).stdout;
    const example = 'sgq api metadata/get_tweets -f user=jack -f how=username -F page=1 --paginate --limit 100';
    if (columns === 200) expect(api).toContain(`  $ ${example}\n`);
    else expect(api.replace(/ \\\n +/g, ' ')).toContain(`  $ ${example}\n`);
  });

  it('into a pipe the help is 80 columns, the same as at an 80-column terminal', async () => {
    for (const path of [['api'], ['graph', 'followers'], []]) {
      expect((await runSgq([...path, '--help'])).stdout).toBe((await runSgq([...path, '--help'], terminal(80))).stdout);
    }
  });
});

describe('help topics', () => {
  type Described = { environment: { name: string; description: string }[]; exit_codes: { code: number; kind: string; meaning: string }[]; formats: { name: string; description: string }[] };
  const described = async () => JSON.parse((await runSgq(['describe', '--json'])).stdout) as Described;
  /** The topic's two columns, joined back where a description wrapped. */
  const items = (text: string) =>
    text
      .split('\n\n')[1]!
      .replace(/\n {4,}/g, ' ')
      .split('\n')
      .map((l) => /^ {2}(\S+(?: \S+)?) {2,}(.*)$/.exec(l)!.slice(1));

  it('sgq help environment lists every variable describe lists, in its order, with the same words', async () => {
    const r = await runSgq(['help', 'environment']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const d = await described();
    expect(items(r.stdout)).toEqual(d.environment.map((e) => [e.name, e.description]));
    expect(d.environment.map((e) => e.name)).toContain('SGQ_API_KEY');
  });

  it('sgq help exit-codes lists every exit code describe lists', async () => {
    const r = await runSgq(['help', 'exit-codes']);
    expect(r.code).toBe(0);
    const d = await described();
    expect(items(r.stdout)).toEqual(d.exit_codes.map((e) => [`${e.code} ${e.kind}`, e.meaning]));
    expect(d.exit_codes.map((e) => e.code)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 130, 143]);
  });

  it('sgq help formats lists every format of -o with what it is', async () => {
    const r = await runSgq(['help', 'formats']);
    expect(r.code).toBe(0);
    const d = await described();
    expect(items(r.stdout)).toEqual(d.formats.map((f) => [f.name, f.description]));
    expect(d.formats.map((f) => f.name)).toEqual(['table', 'json', 'ndjson', 'csv', 'tsv', 'yaml', 'yaml-stream', 'parquet']);
  });

  it('fits the terminal, is the same asked as `sgq formats --help`, and the root help names every topic', async () => {
    const wide = (await runSgq(['help', 'environment'], terminal(200))).stdout;
    expect(wide.split('\n').every((l) => l.length <= 200)).toBe(true);
    expect(wide.split('\n').length).toBeLessThan((await runSgq(['help', 'environment'])).stdout.split('\n').length);
    expect((await runSgq(['formats', '--help'])).stdout).toBe((await runSgq(['help', 'formats'])).stdout);
    const root = (await runSgq(['--help'])).stdout;
    for (const topic of ['environment', 'exit-codes', 'formats']) expect(root).toMatch(new RegExp(`^ {2}sgq help ${topic} +\\S`, 'm'));
    // Topics are not commands: describe and the command list leave them out.
    expect(root).not.toMatch(/^ {2}formats\b/m);
    expect((await described() as unknown as { commands: { name: string }[] }).commands.map((c) => c.name)).not.toContain('formats');
  });
});
