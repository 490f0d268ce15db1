import { describe, expect, it } from 'vitest';
import { documentedExit, helpExamples, jqFields, keysIn, markdownExamples, namedFields, parseArgv, runsSgq, stripComment } from '../helpers/examples.js';

// The reader of the examples that test/e2e/examples.test.ts runs: what it takes from a help and
// a page, and what it says an example names.

describe('examples of a help', () => {
  it('are the $ lines under Examples:, continuations joined, a comment above kept with its line', () => {
    const help = [
      'Usage: sgq x', '', 'Examples:',
      '  $ sgq graph followers jack --all --limit 1000 | jq -r \\',
      '      .follower_username',
      '  # exit 6 until the service opens the route',
      '  $ sgq lists members 1234567890',
      '  $ sgq info   # exits 0', '', 'Help topics:', '  sgq help formats',
    ].join('\n');
    expect(helpExamples(help, 'h')).toEqual([
      { where: 'h', line: 'sgq graph followers jack --all --limit 1000 | jq -r .follower_username', exit: 0 },
      { where: 'h', line: 'sgq lists members 1234567890  # exit 6 until the service opens the route', exit: 6 },
      { where: 'h', line: 'sgq info   # exits 0', exit: 0 },
    ]);
  });
});

describe('examples of a page', () => {
  it('are the sgq lines of sh blocks and the $ lines of console blocks; cron, sql and prose are not', () => {
    const page = [
      'sgq graph followers jack in prose', '```sh', '# a comment', 'sgq info', 'npm ci && ./bin/sgq.cjs --sandbox info',
      'eval "$(sgq sandbox --detach)"    # exports', 'kill "$SGQ_SANDBOX_PID"', 'printf %s "$KEY" | sgq config set api-key',
      'sgq lists members 1   # exit 6 until open', '```', '```console', '$ sgq graph followers jack --all --max-pages 2 --dry-run',
      'sgq: would send POST …', '```', '```cron', '15 3 * * *  sgq graph followers jack', '```',
    ].join('\n');
    expect(markdownExamples(page, 'p.md').map((e) => [e.where, e.line, e.exit])).toEqual([
      ['p.md:4', 'sgq info', 0],
      ['p.md:6', 'eval "$(sgq sandbox --detach)"    # exports', 0],
      ['p.md:8', 'printf %s "$KEY" | sgq config set api-key', 0],
      ['p.md:9', 'sgq lists members 1   # exit 6 until open', 6],
      ['p.md:12', 'sgq graph followers jack --all --max-pages 2 --dry-run', 0],
    ]);
  });

  it('a line runs sgq after an assignment, a pipe or $(; a # in quotes is no comment', () => {
    expect(runsSgq('SGQ_BASE_URL=http://127.0.0.1:8787 SGQ_API_KEY=k sgq graph followers jack')).toBe(true);
    expect(runsSgq('cat users.txt | sgq graph followers -')).toBe(true);
    expect(runsSgq('echo sgq is nice')).toBe(false);
    expect(stripComment(`sgq fmt x --jq '"#" + .a'  # note`)).toBe(`sgq fmt x --jq '"#" + .a'`);
    expect(documentedExit('# exit 7: page 2 fails')).toBe(7);
    expect(documentedExit('# the exit code')).toBe(0);
  });
});

describe('what an example names', () => {
  it('jq: the fields a filter reads, not those in strings, variables or object keys it builds', () => {
    expect(jqFields('.follower_username')).toEqual(['follower_username']);
    expect(jqFields(`select(.username | startswith("a.b")) | .username`)).toEqual(['username']);
    expect(jqFields('.settings[] | select(.source != null)')).toEqual(['settings', 'source']);
    expect(jqFields("group_by(.query_user) | map({user: .[0].query_user, n: length})")).toEqual(['query_user']);
    expect(jqFields('[.query_user, .user_id] | @tsv')).toEqual(['query_user', 'user_id']);
    expect(jqFields('.commands[].name')).toEqual(['commands', 'name']);
    expect(jqFields('$__loc__ | .. | 1.5')).toEqual([]);
  });

  it('argv: command words, positionals and options by the option tables, and the fields --fields, --key and --jq name', () => {
    const values = new Map([['-o', 1], ['--fields', 1], ['--jq', 1], ['--arg', 2], ['--profile', 1], ['--key', 1]]);
    const commands = new Set(['graph', 'graph followers', 'fmt', 'diff']);
    const p = parseArgv(['--profile', 'work', 'graph', 'followers', 'jack', '-o', 'csv', '--fields=query_user,user.name', '--arg', 'x', 'y', '--jq', '.a | .b'], values, commands);
    expect(p.command).toEqual(['graph', 'followers']);
    expect(p.positionals).toEqual(['jack']);
    expect(p.options.get('--arg')).toEqual(['x', 'y']);
    expect(namedFields(p)).toEqual(['query_user', 'user', 'a', 'b']);
    expect(parseArgv(['diff', 'old.ndjson', 'diff', '--key', 'id'], values, commands)).toMatchObject({ command: ['diff'], positionals: ['old.ndjson', 'diff'] });
  });

  it('keys: every key at any depth, of one document or one a line', () => {
    expect([...keysIn('{"a":{"b":1}}\n{"c":[{"d":2}]}\n')]).toEqual(['a', 'b', 'c', 'd']);
    expect([...keysIn('[{"e":1}]')]).toEqual(['e']);
  });
});
