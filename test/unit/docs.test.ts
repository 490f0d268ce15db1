import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { EXIT_MEANINGS, ExitCode } from '../../src/core/errors.js';
import { SETTINGS } from '../../src/core/config.js';
import { ROUTES, routeFolderName } from '../../src/core/routes.js';
import { recordColumns, typedColumns } from '../../src/parquet/declared.js';
import { allCommands, buildProgram, fillAll } from '../../src/cli/program/program.js';
import { anchors, danglingLinks, proseLines } from '../helpers/markdown.js';
import { tempDir } from '../helpers/run.js';

// The README and docs/: the generated pages match the command tree (as the completions do),
// every relative link lands on a file and a heading, and the README stays a short front page
// whose two commands are the ones CI runs.

const root = fileURLToPath(new URL('../..', import.meta.url));
const read = (file: string) => readFileSync(join(root, file), 'utf8');
const pages = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

function tree(): Command[] {
  const sink = { write: () => true } as never;
  const program = buildProgram({ stdout: sink, stderr: sink, stdin: sink, env: {}, stdoutIsTTY: false, stderrIsTTY: false, stdinIsTTY: false }, { exitCode: 0 });
  fillAll(program);
  // The help topics are hidden commands: `sgq help environment`, not commands of the reference.
  return allCommands(program).slice(1).filter((c) => !(c as Command & { _hidden?: boolean })._hidden);
}

function fullName(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** The text of docs/commands.md under `## sgq NAME`, up to the next command. */
function section(page: string, name: string): string {
  const start = page.indexOf(`\n## sgq ${name}\n`);
  expect(start, `docs/commands.md has no section "## sgq ${name}": run \`npm run docs\``).toBeGreaterThan(0);
  const end = page.indexOf('\n## ', start + 1);
  return page.slice(start, end < 0 ? undefined : end);
}

describe('docs/commands.md and the generated blocks', () => {
  it('are what `npm run docs` writes from the command tree now (run it and commit the result)', () => {
    const run = spawnSync(process.execPath, [join(root, 'scripts/docs.mjs'), '--check'], { cwd: root, encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
  });

  it('names every command of the tree with its usage and every one of its flags', () => {
    const page = read('docs/commands.md');
    const commands = tree();
    expect(commands.length).toBeGreaterThan(25);
    for (const cmd of commands) {
      const text = section(page, fullName(cmd));
      for (const option of cmd.options.filter((o) => !o.hidden)) expect(text, `sgq ${fullName(cmd)}: ${option.flags}`).toContain(`\`${option.flags}\``);
    }
  });

  it('gives each exit code the meaning EXIT_MEANINGS gives it, and each setting its variable', () => {
    const codes = read('docs/exit-codes.md');
    for (const [kind, code] of Object.entries(ExitCode)) {
      const meaning = EXIT_MEANINGS[kind as keyof typeof ExitCode].replace(/\|/g, '\\|');
      expect(codes).toContain(`| ${code} | \`${kind}\` | ${meaning} |`);
    }
    const config = read('docs/configuration.md');
    for (const [name, setting] of Object.entries(SETTINGS)) expect(config).toMatch(new RegExp(`\\| \`${name}\` \\| \`${setting.env}\` \\|`));
  });

  it("gives each route's Parquet columns in docs/dataset.md as the description of its records declares them", () => {
    const page = read('docs/dataset.md');
    for (const route of ROUTES) {
      expect(page, route.path).toContain(`\`route=${routeFolderName(route.path)}\``);
      for (const column of typedColumns(recordColumns(route.records))) expect(page, `${route.path} ${column.name}`).toContain(`| \`${column.name}\` | ${column.type} | ${column.description.replace(/\|/g, '\\|')} |`);
    }
    // A column the description lost is a drift too: the block holds nothing else.
    const block = page.slice(page.indexOf('<!-- generated:dataset-schemas -->'), page.indexOf('<!-- /generated:dataset-schemas -->'));
    const declared = new Set(ROUTES.flatMap((r) => typedColumns(recordColumns(r.records)).map((c) => c.name)));
    for (const [, name] of block.matchAll(/^\| `([^`]+)` \|/gm)) expect(declared, name).toContain(name);
  });

  it('--check fails on a page that drifted and names it, and the writer puts it back', () => {
    const copy = tempDir('sgq-docs-');
    for (const dir of ['scripts', 'docs', 'bin']) mkdirSync(join(copy, dir));
    for (const file of ['scripts/docs.mjs', 'docs/exit-codes.md', 'docs/configuration.md', 'docs/dataset.md', 'docs/commands.md']) writeFileSync(join(copy, file), read(file));
    // The copy runs the real binary through a launcher, and reads src/ and node_modules/ through links.
    writeFileSync(join(copy, 'bin/sgq.cjs'), `require(${JSON.stringify(join(root, 'bin/sgq.cjs'))});\n`);
    for (const dir of ['node_modules', 'src']) symlinkSync(join(root, dir), join(copy, dir));
    const drifted = read('docs/exit-codes.md').replace(/\| 7 \| `network` \| [^\n]*/, '| 7 | `network` | something else |');
    writeFileSync(join(copy, 'docs/exit-codes.md'), drifted);
    const check = spawnSync(process.execPath, [join(copy, 'scripts/docs.mjs'), '--check'], { encoding: 'utf8' });
    expect(check.status).toBe(1);
    expect(check.stderr).toBe('docs/exit-codes.md differs from the command tree; run `npm run docs` and commit the result\n');
    const write = spawnSync(process.execPath, [join(copy, 'scripts/docs.mjs')], { encoding: 'utf8' });
    expect(write.status).toBe(0);
    expect(readFileSync(join(copy, 'docs/exit-codes.md'), 'utf8')).toBe(read('docs/exit-codes.md'));
  });
});

describe('links of the README and docs/', () => {
  it.each(pages)('%s: every relative link lands on a file and, with #anchor, on a heading', (page) => {
    expect(danglingLinks(root, page)).toEqual([]);
  });

  it('the checker finds a missing file, a missing heading and a link to a heading of the page itself', () => {
    const dir = tempDir('sgq-links-');
    mkdirSync(join(dir, 'docs'));
    writeFileSync(join(dir, 'docs/a.md'), '# A page\n\n## The cache: `--cache TTL`\n\n## Dup\n\n## Dup\n');
    writeFileSync(join(dir, 'README.md'), [
      '# Top', '', '[ok](docs/a.md#the-cache---cache-ttl) [ok2](docs/a.md#dup-1) [self](#top) [web](https://example.com/x.md)',
      '[gone](docs/b.md) [no heading](docs/a.md#the-cache) [no self](#nowhere) `[in code](docs/c.md)`',
      '```', '[in a block](docs/d.md)', '```', '',
    ].join('\n'));
    expect(danglingLinks(dir, 'README.md')).toEqual([
      'README.md:4: docs/b.md (no file docs/b.md)',
      'README.md:4: docs/a.md#the-cache (no heading #the-cache in docs/a.md)',
      'README.md:4: #nowhere (no heading #nowhere in README.md)',
    ]);
  });

  it('anchors follow GitHub: code and punctuation dropped, case folded, duplicates numbered', () => {
    expect([...anchors('# Re-render without a request: `sgq fmt`\n## Dup\n## Dup\n```\n# not a heading\n```\n')])
      .toEqual(['re-render-without-a-request-sgq-fmt', 'dup', 'dup-1']);
  });
});

describe('the README', () => {
  const readme = read('README.md');

  it('is a front page of at most 300 lines, linking every page of docs/ (dataset.md included)', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(300);
    for (const page of pages.filter((p) => p.startsWith('docs/'))) expect(readme, page).toContain(`](${page}`);
    expect(existsSync(join(root, 'docs/dataset.md'))).toBe(true);
    expect(read('docs/README.md')).toContain('](dataset.md)');
  });

  it('gives the two commands of a fresh clone, the test command being the one CI runs', () => {
    const start = readme.indexOf('## The two commands');
    const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(start))![1]!;
    const commands = block.split('\n').filter((l) => l && !l.startsWith('#'));
    expect(commands).toEqual(['npm ci && ./bin/sgq.cjs --sandbox graph followers jack --all', 'npm ci && npm test']);
    // .ci/run runs the README's test command on every Node line.
    expect(read('.ci/run')).toMatch(/\bnpm test\b/);
  });

  it('names no tarball that `npm pack` would not write', () => {
    const version = JSON.parse(read('package.json')).version as string;
    for (const page of pages) {
      for (const m of read(page).matchAll(/sgq-(\d+\.\d+\.\d+)\.tgz/g)) expect(`${page}: sgq-${m[1]}.tgz`).toBe(`${page}: sgq-${version}.tgz`);
    }
  });

  it('keeps each table whole and each flag of a table in one row', () => {
    for (const page of pages) {
      const lines = proseLines(read(page));
      lines.forEach(({ line, n }, i) => {
        // A row (not a new table's header) right after a blank line that follows a table splits it in two.
        const header = /^\|(\s*:?-+:?\s*\|)+\s*$/.test(lines[i + 1]?.line ?? '');
        if (line.startsWith('|') && !header && i >= 2 && lines[i - 1]!.line === '' && lines[i - 2]!.line.startsWith('|')) {
          throw new Error(`${page}:${n}: a table continues after a blank line`);
        }
      });
      const tables = read(page).split(/\n(?!\|)/).filter((t) => t.startsWith('|'));
      for (const table of tables) {
        const firstCells = table.split('\n').map((r) => r.split(' | ')[0]).filter((c) => /^\| `-/.test(c ?? ''));
        expect(firstCells.length, `${page}: a flag listed twice in one table`).toBe(new Set(firstCells).size);
      }
    }
  });
});
