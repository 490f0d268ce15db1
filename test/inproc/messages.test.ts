import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEMO_KEY } from '../../src/sandbox/server.js';
import { runSgq, tempDir, type RunResult } from '../helpers/run.js';
import { useSandbox } from '../helpers/sandbox.js';
import { envelope, useStubs } from '../helpers/stub-server.js';

// Messages that fix the problem: every failure is one line with a documented code, names
// where the bad value came from, and says the exact command that fixes it.

const sb = useSandbox();
const stubs = useStubs();

/** One line on stderr, in sgq's voice, never an internal error, never a doubled `.;`. */
function expectOneLine(r: RunResult): string {
  const lines = r.stderr.trim().split('\n');
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^sgq: /);
  expect(lines[0]).not.toContain('internal error');
  expect(lines[0]).not.toMatch(/[.!?];/);
  return lines[0]!;
}

/** A config folder holding `content` as its config file. */
function configWith(content: string): string {
  const dir = tempDir();
  writeFileSync(join(dir, 'config.json'), content);
  return dir;
}

describe('hints name the profile in use', () => {
  it('no api-key with --profile work (and the default address): the hint sets it in profile work', async () => {
    const env = { SGQ_CONFIG_DIR: tempDir() };
    await runSgq(['config', 'set', 'output', 'csv', '--profile', 'work'], { env });
    const r = await runSgq(['--profile', 'work', 'graph', 'followers', 'jack'], { env });
    expect(r.code).toBe(3);
    expect(expectOneLine(r)).toContain('`sgq config set api-key --profile work`');
  });

  it('no api-key with SGQ_PROFILE=work: the hint sets it in profile work', async () => {
    const env = { SGQ_CONFIG_DIR: tempDir(), SGQ_PROFILE: 'work' };
    await runSgq(['config', 'set', 'base-url', sb.sandbox.url], { env });
    const r = await runSgq(['graph', 'followers', 'jack'], { env });
    expect(r.code).toBe(3);
    expect(expectOneLine(r)).toContain('`sgq config set api-key --profile work`');
  });
});

describe('a rejected key names where it came from, masked', () => {
  const wrong = 'wrong-key-from-somewhere-9876';

  it('from SGQ_API_KEY', async () => {
    const env = { SGQ_CONFIG_DIR: tempDir(), SGQ_BASE_URL: sb.sandbox.url, SGQ_API_KEY: wrong };
    const r = await runSgq(['graph', 'followers', 'jack'], { env });
    expect(r.code).toBe(3);
    const line = expectOneLine(r);
    expect(line).toContain('the API key from SGQ_API_KEY (****9876)');
    expect(line).toContain('unset SGQ_API_KEY');
    expect(r.stderr + r.stdout).not.toContain(wrong);
  });

  it('from profile work', async () => {
    const env = { SGQ_CONFIG_DIR: tempDir(), SGQ_BASE_URL: sb.sandbox.url };
    expect((await runSgq(['config', 'set', 'api-key', '--profile', 'work'], { env, stdin: wrong })).code).toBe(0);
    const r = await runSgq(['graph', 'followers', 'jack', '--profile', 'work'], { env });
    expect(r.code).toBe(3);
    const line = expectOneLine(r);
    expect(line).toContain('the API key of profile work (****9876)');
    expect(line).toContain('`sgq config set api-key --profile work`');
    expect(r.stderr + r.stdout).not.toContain(wrong);
  });
});

describe('a key that an HTTP header cannot carry: exit 3 before any request, key not shown', () => {
  for (const [what, key] of [
    ['a control character', 'abc\u0001defghijk'],
    ['a letter outside Latin-1', 'abcdefgh\u20acijk'],
    ['a line break inside', 'abcdefgh\r\nX-Evil: 1'],
  ] as const) {
    it(`from SGQ_API_KEY, holding ${what}`, async () => {
      const stub = await stubs([]);
      const r = await runSgq(['graph', 'followers', 'jack'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: key } });
      expect(r.code).toBe(3);
      const line = expectOneLine(r);
      expect(line).toContain('HTTP header cannot carry');
      expect(line).toContain('SGQ_API_KEY');
      expect(line).not.toContain(key.slice(0, 8));
      expect(stub.requests).toHaveLength(0);
    });
  }

  it('from a hand-edited profile', async () => {
    const stub = await stubs([]);
    const dir = configWith(JSON.stringify({ profiles: { default: { 'base-url': stub.url, 'api-key': 'abcdefgh\u0007ijk' } } }));
    const r = await runSgq(['graph', 'followers', 'jack'], { env: { SGQ_CONFIG_DIR: dir } });
    expect(r.code).toBe(3);
    expect(expectOneLine(r)).toContain('profile default');
    expect(stub.requests).toHaveLength(0);
  });

  it('config set refuses it (exit 2) and stores nothing', async () => {
    const dir = tempDir();
    const r = await runSgq(['config', 'set', 'api-key'], { env: { SGQ_CONFIG_DIR: dir }, stdin: 'abcdefgh\u20acijk\n' });
    expect(r.code).toBe(2);
    expect(expectOneLine(r)).toContain('HTTP header cannot carry');
    expect(existsSync(join(dir, 'config.json'))).toBe(false);
  });
});

describe('a 404 on the route path', () => {
  it('hints at a wrong base-URL prefix', async () => {
    const r = await runSgq(['graph', 'followers', 'jack'], { env: { ...sb.env(), SGQ_BASE_URL: `${sb.sandbox.url}/social` } });
    expect(r.code).toBe(4);
    const line = expectOneLine(r);
    expect(line).toContain('/social/api/graph/get_followers');
    expect(line).toContain('path prefix');
  });
});

describe('config set api-key VALUE', () => {
  it('is refused with the way to pipe it, and stores nothing', async () => {
    const dir = tempDir();
    const key = 'argument-key-1234567';
    const r = await runSgq(['config', 'set', 'api-key', key, '--profile', 'work'], { env: { SGQ_CONFIG_DIR: dir } });
    expect(r.code).toBe(2);
    const line = expectOneLine(r);
    expect(line).toContain('printf %s "$KEY" | sgq config set api-key --profile work');
    expect(line).not.toContain(key);
    expect(existsSync(join(dir, 'config.json'))).toBe(false);
  });
});

describe('settings follow the same rules as their flags', () => {
  for (const [value, ok] of [['99999', false], ['1e3', false], ['0', false], ['3600', true], ['0.5', true]] as const) {
    it(`timeout ${value}: config set ${ok ? 'accepts' : 'refuses'} it, as --timeout does`, async () => {
      const set = await runSgq(['config', 'set', 'timeout', value], { env: { SGQ_CONFIG_DIR: tempDir() } });
      const flag = await runSgq(['--timeout', value, '--sandbox', 'info']);
      expect(set.code).toBe(ok ? 0 : 2);
      expect(flag.code).toBe(ok ? 0 : 2);
      if (!ok) expectOneLine(set);
    });
  }

  it('retries 21 is refused by both', async () => {
    expect((await runSgq(['config', 'set', 'retries', '21'], { env: { SGQ_CONFIG_DIR: tempDir() } })).code).toBe(2);
    expect((await runSgq(['--retries', '21', '--sandbox', 'info'])).code).toBe(2);
  });
});

describe('a hand-edited config file', () => {
  it('holding a number is read as that number', async () => {
    const dir = configWith('{"profiles":{"default":{"timeout":30,"retries":0}}}');
    const r = await runSgq(['info'], { env: { SGQ_CONFIG_DIR: dir, SGQ_BASE_URL: sb.sandbox.url } });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });

  for (const [what, content, says] of [
    ['an out-of-range number', '{"profiles":{"default":{"timeout":99999}}}', 'invalid timeout "99999" (from profile default of'],
    ['a value that is neither text nor a number', '{"profiles":{"default":{"timeout":true}}}', 'neither text nor a number'],
    ['text that is not JSON', '{"profiles":', 'is not valid JSON'],
    ['a profile that is not an object', '{"profiles":{"default":3}}', 'does not hold'],
  ] as const) {
    it(`holding ${what} is exit 3 naming the file`, async () => {
      const dir = configWith(content);
      const r = await runSgq(['info'], { env: { SGQ_CONFIG_DIR: dir, SGQ_BASE_URL: sb.sandbox.url } });
      expect(r.code).toBe(3);
      const line = expectOneLine(r);
      expect(line).toContain(says);
      expect(line).toContain(join(dir, 'config.json'));
    });
  }
});

describe('reading the config never writes', () => {
  it('a run with no config file leaves none behind', async () => {
    const dir = join(tempDir(), 'not-yet');
    const r = await runSgq(['--sandbox', 'info'], { env: { SGQ_CONFIG_DIR: dir } });
    expect(r.code).toBe(0);
    // The sandbox's balance note may be kept beside it (its own, since 4.0): never a config file.
    expect(existsSync(join(dir, 'config.json'))).toBe(false);
    expect((await runSgq(['config', 'list'], { env: { SGQ_CONFIG_DIR: dir } })).code).toBe(0);
    expect(existsSync(join(dir, 'config.json'))).toBe(false);
  });

  it('a config folder that cannot exist (under a regular file): runs work, config set is exit 3', async () => {
    const file = join(tempDir(), 'a-file');
    writeFileSync(file, '');
    const env = { SGQ_CONFIG_DIR: join(file, 'sgq') };
    expect((await runSgq(['--sandbox', 'info'], { env })).code).toBe(0);
    expect((await runSgq(['info'], { env: { ...env, SGQ_BASE_URL: sb.sandbox.url } })).code).toBe(0);
    const set = await runSgq(['config', 'set', 'output', 'csv'], { env });
    expect(set.code).toBe(3);
    expect(expectOneLine(set)).toContain(`cannot write the config file ${join(file, 'sgq', 'config.json')}`);
  });

  it('a config file that is unchanged by a run keeps its bytes', async () => {
    const content = '{ "profiles": { "default": { "timeout": 30 } }, "note": "hand-written" }\n';
    const dir = configWith(content);
    expect((await runSgq(['--sandbox', 'info'], { env: { SGQ_CONFIG_DIR: dir } })).code).toBe(0);
    expect(readFileSync(join(dir, 'config.json'), 'utf8')).toBe(content);
  });

  it('config set keeps what it does not know in a hand-edited file', async () => {
    const dir = configWith('{"profiles":{"default":{"timeout":30,"comment":"mine"}},"note":"kept"}');
    expect((await runSgq(['config', 'set', 'output', 'csv'], { env: { SGQ_CONFIG_DIR: dir } })).code).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'))).toEqual({
      profiles: { default: { timeout: '30', comment: 'mine', output: 'csv' } },
      note: 'kept',
    });
  });
});

describe('--since out of range: exit 2 before any request', () => {
  for (const since of ['99999999d', '10000-01-01', '0001-01-01T00:00:00+01:00', '1e400d']) {
    it(since, async () => {
      const stub = await stubs([]);
      const r = await runSgq(['graph', 'followers', 'jack', '--since', since], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: DEMO_KEY } });
      expect(r.code).toBe(2);
      expectOneLine(r);
      expect(stub.requests).toHaveLength(0);
    });
  }

  it('the first day of year 1 is a real date, sent as such', async () => {
    const stub = await stubs([{ body: envelope(1, null, []) }]);
    const r = await runSgq(['graph', 'followers', 'jack', '--since', '0001-01-01'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: DEMO_KEY } });
    expect(r.code).toBe(0);
    expect(stub.bodies()[0]!.since).toBe('0001-01-01T00:00:00.000000+00:00');
  });
});

describe('one line, always', () => {
  it('an unknown command carries its suggestion on the same line', async () => {
    for (const argv of [['grap'], ['graph', 'folowers', 'jack']]) {
      const r = await runSgq(argv);
      expect(r.code).toBe(2);
      expect(expectOneLine(r)).toMatch(/unknown command '\w+' \(did you mean (graph|followers)\?\)/);
    }
  });

  it("a service's message ending in a full stop, followed by a hint, has no doubled punctuation", async () => {
    const stub = await stubs([{ status: 503, body: { message: 'Service down for maintenance.' } }]);
    const r = await runSgq(['graph', 'followers', 'jack', '--retries', '0'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: DEMO_KEY } });
    expect(r.code).toBe(7);
    expect(expectOneLine(r)).toContain('Service down for maintenance; try again later');
  });

  it('an invalid flag value has no doubled punctuation', async () => {
    const r = await runSgq(['--timeout', '0', 'info']);
    expect(r.code).toBe(2);
    expectOneLine(r);
  });
});

describe('flags that would have no effect are usage errors', () => {
  for (const [argv, says] of [
    [['graph', 'followers', 'jack', '--max-pages', '2'], '--max-pages only applies with --all'],
    [['graph', 'followers', 'jack', '--state', 'marks.json'], '--state only applies with --since-last'],
    [['-q', '-v', 'info'], 'cannot be used with'],
    [['info', '--verbose', '--quiet'], 'cannot be used with'],
  ] as const) {
    it(argv.join(' '), async () => {
      const stub = await stubs([]);
      const r = await runSgq([...argv], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: DEMO_KEY } });
      expect(r.code).toBe(2);
      expect(expectOneLine(r)).toContain(says);
      expect(stub.requests).toHaveLength(0);
    });
  }
});

describe('sgq help A B', () => {
  it('shows the help of B, not of A', async () => {
    const r = await runSgq(['help', 'graph', 'followers']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage: sgq graph followers /);
  });
});

describe('--quiet', () => {
  it('still says that a CSV column seen only on a later page was left out', async () => {
    const stub = await stubs([{ body: envelope(1, 2, [{ username: 'a' }]) }, { body: envelope(2, null, [{ username: 'b', bio: 'late' }]) }]);
    const r = await runSgq(['graph', 'followers', 'jack', '--all', '-o', 'csv', '--quiet'], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: DEMO_KEY } });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('username\r\na\r\nb\r\n');
    expect(r.stderr).toContain('"bio"');
  });

  it('hides the summary and the more-pages note', async () => {
    const r = await runSgq(['graph', 'followers', 'big_1500', '--quiet'], { env: sb.env(), stderrIsTTY: true });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
  });
});

describe('counts agree with their nouns (issue 34)', () => {
  const one = async (extra: string[] = [], env: Record<string, string> = {}) => {
    const stub = await stubs(() => ({ body: envelope(1, null, [{ username: 'a' }], 1) }));
    const r = await runSgq(['graph', 'followers', 'jack', ...extra], { env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: DEMO_KEY, ...env } });
    return { ...r, url: stub.url };
  };

  it('1 credit left, under warn-credits; sgq credits says 1 credit', async () => {
    const config = tempDir();
    const r = await one(['--quiet'], { SGQ_WARN_CREDITS: '5', SGQ_CONFIG_DIR: config });
    expect(r.stderr).toBe('sgq: only 1 credit left, fewer than warn-credits 5; buy credits before the next run fails\n');
    const shown = await runSgq(['credits', '-v'], { env: { SGQ_CONFIG_DIR: config, SGQ_BASE_URL: r.url } });
    expect(shown.stderr).toMatch(/^profile default: 1 credit, seen /);
  });

  it('a --jq --slurp failure over 1 record', async () => {
    const r = await one(['--jq', 'error("no")', '--slurp']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('--jq failed on the array of 1 record: ');
  });
});
