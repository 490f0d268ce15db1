import { execa, execaSync } from 'execa';
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync, gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROUTES, commandName, findRouteByPath } from '../../src/core/routes.js';
import { DEMO_KEY } from '../../src/sandbox/server.js';
import { BIN } from '../helpers/e2e.js';
import { helpExamples, jqFields, keysIn, markdownExamples, namedFields, parseArgv, stripComment, type Example, type ParsedArgv } from '../helpers/examples.js';
import { lines, runSgq, tempDir } from '../helpers/run.js';
import { useSandbox } from '../helpers/sandbox.js';

// Every `sgq` example a user is shown (the examples of each --help, and the shell lines of the
// README and docs/) runs, in the order its page shows it, against a sandbox in a world made for
// it: a fresh home, sgq configured for the sandbox with a second profile `work`, users.txt and accounts.txt listing
// accounts, two exports to diff (old.ndjson, new.ndjson.gz), two snapshots of jack's followers
// and following taken before 2026-11-20, a dataset in ~/sgq-data, the shells' completion
// folders, $KEY holding a key, and the key on stdin. An example fails on an exit code other
// than the one its page gives (`# exit N`; else 0), or on a field it names (--fields, --key,
// --jq, or a jq it pipes into) that the records it reads lack.
//
// What counts: a line's last sgq exits with the code given, the sgq runs before it with 0, and
// a line documented to succeed succeeds as a whole (pipefail). A server (`sgq sandbox` without
// --detach) runs on a free port for a second (--ttl 1) and must print its address. No request
// leaves the machine: a proxy on a closed loopback port stands in for everything but loopback.

const root = fileURLToPath(new URL('../..', import.meta.url));
// The pages take minutes on a busy machine: the sandbox serves the whole file.
const sb = useSandbox({ ttlMs: 30 * 60_000 });

/** Examples not run, each with the reason; an entry that names no example any more fails the last test. */
const NOT_RUN: Record<string, string> = {
  'sgq completion zsh > "${fpath[1]}/_sgq"': "zsh's own syntax: under bash it would write /_sgq; it writes into zsh's function folder",
  'sgq config set notify': 'reads a webhook address at a hidden prompt or from stdin, where the world holds the API key',
};

const hasJq = execaSync('sh', ['-c', 'command -v jq'], { reject: false }).exitCode === 0;
const pipesIntoJq = (e: Example) => /\|\s*jq\b/.test(stripComment(e.line));

/** Each command's path (`[]` for sgq itself, `['graph', 'followers']`), from `sgq describe --json`. */
async function commandPaths(): Promise<string[][]> {
  const described = JSON.parse((await runSgq(['describe', '--json'])).stdout) as { commands: { name: string; commands?: unknown[] }[] };
  const walk = (commands: { name: string; commands?: unknown[] }[]): string[][] =>
    commands.flatMap((c) => [c.name.split(' '), ...walk((c.commands ?? []) as { name: string }[])]);
  return [[], ...walk(described.commands)];
}

/** What `sgq … --help` prints into a pipe, for every command: each with the examples it shows. */
async function helps(): Promise<{ name: string; examples: Example[] }[]> {
  const out = [];
  for (const path of await commandPaths()) {
    const name = ['sgq', ...path, '--help'].join(' ');
    out.push({ name, examples: helpExamples((await runSgq([...path, '--help'])).stdout, name) });
  }
  return out;
}

/** The helps and the pages. */
function sources(helpTexts: { name: string; examples: Example[] }[]): { name: string; examples: Example[] }[] {
  const pages = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];
  const docs = pages.map((page) => ({ name: page, examples: markdownExamples(readFileSync(join(root, page), 'utf8'), page) }));
  return [...helpTexts, ...docs]
    .map((s) => ({ ...s, examples: s.examples.filter((e) => NOT_RUN[stripComment(e.line)] === undefined && (hasJq || !pipesIntoJq(e))) }))
    .filter((s) => s.examples.length > 0);
}

const HELPS = await helps();
const SOURCES = sources(HELPS);

interface World {
  template: string;
  /** Each route command's record fields, as the sandbox serves them (and query_user). */
  routeKeys: Map<string, Set<string>>;
  values: Map<string, number>;
  commands: Set<string>;
}

const world = {} as World;

beforeAll(async () => {
  world.template = await makeTemplate();
  Object.assign(world, await optionTables());
  world.routeKeys = new Map();
  for (const route of ROUTES.filter((r) => r.subject === 'user')) {
    const r = await runSgq([...commandName(route).split(' '), 'jack', 'dorsey', '-o', 'ndjson'], { env: sb.env() });
    world.routeKeys.set(commandName(route), keysIn(r.stdout));
  }
}, 180_000);

/** The world every page's examples start from (copied for each). */
async function makeTemplate(): Promise<string> {
  const dir = tempDir('sgq-examples-');
  const home = join(dir, 'home');
  const work = join(dir, 'work');
  for (const d of ['.local/share/bash-completion/completions', '.config/fish/completions']) mkdirSync(join(home, d), { recursive: true });
  mkdirSync(work);
  mkdirSync(join(dir, 'config'));
  const env = { ...sb.env(), HOME: home, SGQ_CONFIG_DIR: join(dir, 'config') };
  // sgq configured as the README's first steps leave it, and a second profile.
  expect((await runSgq(['config', 'set', 'base-url', sb.sandbox.url], { env })).code).toBe(0);
  expect((await runSgq(['config', 'set', 'api-key'], { env, stdin: DEMO_KEY })).code).toBe(0);
  expect((await runSgq(['config', 'set', 'timeout', '60', '--profile', 'work'], { env })).code).toBe(0);
  for (const file of ['users.txt', 'accounts.txt']) writeFileSync(join(work, file), 'jack\ndorsey\n');
  for (const relation of ['followers', 'following']) {
    for (const day of ['2026-11-10', '2026-11-15']) {
      const r = await runSgq(['graph', relation, 'jack', '--all', '--snapshot'], { env, now: () => new Date(`${day}T03:00:00Z`) });
      expect(r.code, r.stderr).toBe(0);
    }
  }
  const all = await runSgq(['graph', 'followers', 'jack', '--all', '--dataset', join(home, 'sgq-data')], { env });
  expect(all.code, all.stderr).toBe(0);
  writeFileSync(join(work, 'old.ndjson'), `${lines(all.stdout).slice(5).join('\n')}\n`);
  writeFileSync(join(work, 'new.ndjson.gz'), gzipSync(all.stdout));
  writeFileSync(join(dir, 'stdin'), `${DEMO_KEY}\n`);
  writeShims(join(dir, 'bin'));
  return dir;
}

/** `sgq` and `jq` on the PATH: each runs the real one and notes its argv, its exit code and (jq) its input. */
function writeShims(bin: string): void {
  mkdirSync(bin);
  const sgq = [
    '#!/bin/sh',
    'id=$$',
    'printf \'%s\\0\' "$@" > "$SGQ_EX_OUT/sgq.$id.args"',
    `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} "$@"`,
    's=$?',
    'echo "sgq $id $s" >> "$SGQ_EX_LOG"',
    'exit $s',
  ];
  const jq = hasJq ? execaSync('sh', ['-c', 'command -v jq']).stdout.trim() : '/nonexistent/jq';
  const jqShim = [
    '#!/bin/bash',
    'id=$$',
    'printf \'%s\\0\' "$@" > "$SGQ_EX_OUT/jq.$id.args"',
    `tee "$SGQ_EX_OUT/jq.$id.in" | ${JSON.stringify(jq)} "$@"`,
    's=${PIPESTATUS[1]}',
    'echo "jq $id $s" >> "$SGQ_EX_LOG"',
    'exit $s',
  ];
  writeFileSync(join(bin, 'sgq'), `${sgq.join('\n')}\n`);
  writeFileSync(join(bin, 'jq'), `${jqShim.join('\n')}\n`);
  chmodSync(join(bin, 'sgq'), 0o755);
  chmodSync(join(bin, 'jq'), 0o755);
}

/** How many values each flag takes, and the command names, from `sgq describe --json`. */
async function optionTables(): Promise<Pick<World, 'values' | 'commands'>> {
  const d = JSON.parse((await runSgq(['describe', '--json'])).stdout) as { global_options: { flags: string }[]; commands: { name: string; options: { flags: string }[] }[] };
  const values = new Map<string, number>();
  for (const o of [...d.global_options, ...d.commands.flatMap((c) => c.options)]) {
    const count = (o.flags.match(/</g) ?? []).length;
    for (const flag of o.flags.split(/[ ,]+/).filter((w) => w.startsWith('-'))) values.set(flag, count);
  }
  return { values, commands: new Set(d.commands.map((c) => c.name)) };
}

/** A server example as the test runs it: on a free port, for a second. */
function serving(line: string): string | undefined {
  const command = stripComment(line);
  if (!/^sgq sandbox\b/.test(command) || command.includes('--detach')) return undefined;
  const foreground = command.replace(/\s*&\s*$/, '').replace(/--port \d+/, '--port 0');
  return foreground.includes('--ttl') ? foreground : `${foreground} --ttl 1`;
}

/** The script that runs a page's examples in one shell, in order, noting where each starts and ends. */
function script(examples: Example[]): string {
  const out = ['set -o pipefail', 'pids=', 'trap \'[ -n "$pids" ] && kill $pids 2>/dev/null\' EXIT', 'cd "$SGQ_EX_WORK"'];
  examples.forEach((e, i) => {
    out.push(
      `echo "@@ ${i}" >> "$SGQ_EX_LOG"`,
      `{ ${serving(e.line) ?? e.line}`,
      `} < "$SGQ_EX_STDIN" > "$SGQ_EX_OUT/${i}.out" 2> "$SGQ_EX_OUT/${i}.err"`,
      `echo "== ${i} $?" >> "$SGQ_EX_LOG"`,
      // A sandbox an example detached is stopped when the page ends, whatever its own lines do.
      'if [ -n "${SGQ_SANDBOX_PID:-}" ]; then pids="$pids $SGQ_SANDBOX_PID"; fi',
    );
  });
  return `${out.join('\n')}\n`;
}

interface Ran {
  status: number | undefined;
  sgq: { argv: string[]; status: number }[];
  jq: { argv: string[]; input: string; status: number }[];
  stdout: string;
  stderr: string;
}

/** Runs a page's examples in a copy of the template world; what each did. */
async function runPage(examples: Example[]): Promise<{ ran: Ran[]; work: string }> {
  const dir = tempDir('sgq-examples-world-');
  cpSync(world.template, dir, { recursive: true });
  const out = join(dir, 'out');
  mkdirSync(out);
  const log = join(out, 'log');
  writeFileSync(join(dir, 'script.sh'), script(examples));
  const proxy = 'http://127.0.0.1:9';
  const env = {
    PATH: `${join(dir, 'bin')}:${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
    HOME: join(dir, 'home'),
    SGQ_CONFIG_DIR: join(dir, 'config'),
    ...sb.env(),
    KEY: DEMO_KEY,
    TMPDIR: process.env.TMPDIR ?? '/tmp',
    LANG: 'C.UTF-8',
    HTTPS_PROXY: proxy, HTTP_PROXY: proxy, https_proxy: proxy, http_proxy: proxy, NO_PROXY: '127.0.0.1,localhost', no_proxy: '127.0.0.1,localhost',
    SGQ_EX_LOG: log, SGQ_EX_OUT: out, SGQ_EX_STDIN: join(dir, 'stdin'), SGQ_EX_WORK: join(dir, 'work'),
  };
  await execa('bash', [join(dir, 'script.sh')], { env, extendEnv: false, reject: false, stdin: 'ignore', timeout: 170_000 });
  return { ran: readLog(log, out, examples.length), work: join(dir, 'work') };
}

function readLog(log: string, out: string, count: number): Ran[] {
  const ran: Ran[] = Array.from({ length: count }, (_, i) => ({
    status: undefined,
    sgq: [],
    jq: [],
    stdout: existsSync(join(out, `${i}.out`)) ? readFileSync(join(out, `${i}.out`), 'utf8') : '',
    stderr: existsSync(join(out, `${i}.err`)) ? readFileSync(join(out, `${i}.err`), 'utf8') : '',
  }));
  const argvOf = (file: string) => readFileSync(file, 'utf8').split('\0').slice(0, -1);
  let current = -1;
  for (const entry of existsSync(log) ? lines(readFileSync(log, 'utf8')) : []) {
    const [kind, id, status] = entry.split(' ') as [string, string, string];
    if (kind === '@@') current = Number(id);
    else if (kind === '==') ran[Number(id)]!.status = Number(status);
    else if (kind === 'sgq') ran[current]!.sgq.push({ argv: argvOf(join(out, `sgq.${id}.args`)), status: Number(status) });
    else if (kind === 'jq') ran[current]!.jq.push({ argv: argvOf(join(out, `jq.${id}.args`)), input: readFileSync(join(out, `jq.${id}.in`), 'utf8'), status: Number(status) });
  }
  return ran;
}

/** What is wrong with one example's run: its exit codes, then the fields it names. */
function problems(example: Example, ran: Ran, work: string): string[] {
  const found: string[] = [];
  const said = (what: string) => found.push(`${example.where}: \`${example.line}\`: ${what}${ran.stderr ? `\n    stderr: ${ran.stderr.trim().split('\n').slice(-3).join('\n    ')}` : ''}`);
  if (ran.sgq.length === 0) said(`ran no sgq (exit ${ran.status})`);
  const last = ran.sgq.at(-1);
  ran.sgq.slice(0, -1).forEach((s) => s.status !== 0 && said(`sgq ${s.argv.join(' ')} exited ${s.status}, before the last sgq of the line`));
  if (last && last.status !== example.exit) said(`exited ${last.status}; the page gives ${example.exit}`);
  if (example.exit === 0 && ran.status !== 0 && last?.status === 0) said(`the line exited ${ran.status} (pipefail)`);
  if (serving(example.line) && !ran.stdout.includes('export SGQ_BASE_URL=')) said('served no address');
  for (const s of ran.sgq) for (const p of fieldProblems(s.argv, work)) said(p);
  for (const j of ran.jq) for (const p of jqProblems(j.argv, j.input)) said(p);
  return found;
}

/** The fields an sgq run names that the records it reads lack. */
function fieldProblems(argv: string[], work: string): string[] {
  if (argv.includes('--help') || argv.includes('-h')) return [];
  const parsed = parseArgv(argv, world.values, world.commands);
  const names = namedFields(parsed);
  if (names.length === 0) return [];
  const keys = recordKeys(parsed, work);
  if (keys === undefined) return [`names ${names.join(', ')}, but the test knows no records of \`sgq ${parsed.command.join(' ')}\`: teach it`];
  const missing = names.filter((n) => !keys.has(n));
  return missing.length ? [`names ${missing.join(', ')}, which its records lack (they have ${[...keys].sort().join(', ')})`] : [];
}

/** The keys of the records an sgq run reads: a route's, a file's (fmt, diff), or those of the route `api` calls. */
function recordKeys(parsed: ParsedArgv, work: string): Set<string> | undefined {
  const command = parsed.command.join(' ');
  const withUser = (keys: Set<string> | undefined) => keys && new Set([...keys, 'query_user']);
  if (world.routeKeys.has(command)) return withUser(world.routeKeys.get(command));
  if (command === 'api') {
    const route = findRouteByPath(parsed.positionals[0] ?? '');
    return route && withUser(world.routeKeys.get(commandName(route)));
  }
  const files = parsed.positionals.map((p) => resolve(work, p)).filter((p) => existsSync(p));
  if ((command === 'fmt' || command === 'diff') && files.length > 0) return fileKeys(files[0]!);
  if (command === 'diff') return world.routeKeys.get(parsed.options.has('--following') ? 'graph following' : 'graph followers');
  return undefined;
}

/** The record keys of a file sgq wrote: NDJSON records, or --raw bodies whose records are under `data`. */
function fileKeys(file: string): Set<string> {
  const bytes = readFileSync(file);
  const text = (file.endsWith('.gz') ? gunzipSync(bytes) : bytes).toString('utf8');
  const first = JSON.parse(lines(text)[0] ?? '{}') as Record<string, unknown>;
  if (Array.isArray(first.data)) return keysIn(lines(text).map((l) => JSON.stringify((JSON.parse(l) as { data: unknown }).data)).join('\n'));
  return keysIn(text);
}

/** The fields a jq filter reads that its input lacks. */
function jqProblems(argv: string[], input: string): string[] {
  const values = new Map([['--arg', 2], ['--argjson', 2], ['--slurpfile', 2], ['--rawfile', 2], ['--indent', 1]]);
  const filter = parseArgv(argv, values, new Set()).positionals[0] ?? '.';
  if (input.trim() === '') return [`jq ${filter} read nothing: the example shows nothing`];
  const keys = keysIn(input);
  const missing = jqFields(filter).filter((n) => !keys.has(n));
  return missing.length ? [`jq ${filter} reads ${missing.join(', ')}, which its input lacks (it has ${[...keys].sort().join(', ')})`] : [];
}

describe('every sgq example of --help, the README and docs/', () => {
  it.each(SOURCES.map((s) => [s.name, s] as const))('%s', async (_name, source) => {
    const { ran, work } = await runPage(source.examples);
    expect(source.examples.flatMap((e, i) => problems(e, ran[i]!, work))).toEqual([]);
  }, 180_000);

  it('the examples not run are ones a page shows', () => {
    const all = [...HELPS.flatMap((h) => h.examples),
      ...['README.md', ...readdirSync(join(root, 'docs')).map((f) => `docs/${f}`)].filter((p) => p.endsWith('.md')).flatMap((p) => markdownExamples(readFileSync(join(root, p), 'utf8'), p))];
    for (const line of Object.keys(NOT_RUN)) expect(all.some((e) => stripComment(e.line) === line), line).toBe(true);
  });

  if (!hasJq) it.skip('examples piped into jq need jq on the PATH (not installed here: left out)', () => {});
});
