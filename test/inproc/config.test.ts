import { statSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEMO_KEY } from '../../src/sandbox/server.js';
import { runSgq, tempDir } from '../helpers/run.js';
import { useSandbox } from '../helpers/sandbox.js';

const sb = useSandbox();

describe('sgq config', () => {
  it('set, get, list, unset, path', async () => {
    const env = { SGQ_CONFIG_DIR: tempDir() };
    expect((await runSgq(['config', 'set', 'base-url', 'https://gw.example.com/social/'], { env })).code).toBe(0);
    expect((await runSgq(['config', 'get', 'base-url'], { env })).stdout).toBe('https://gw.example.com/social\n');
    expect((await runSgq(['config', 'set', 'output', 'csv'], { env })).code).toBe(0);
    expect((await runSgq(['config', 'list'], { env })).stdout).toBe('base-url=https://gw.example.com/social\noutput=csv\n');
    expect((await runSgq(['config', 'unset', 'output'], { env })).code).toBe(0);
    expect((await runSgq(['config', 'list'], { env })).stdout).toBe('base-url=https://gw.example.com/social\n');
    const path = (await runSgq(['config', 'path'], { env })).stdout.trim();
    expect(path.startsWith(env.SGQ_CONFIG_DIR)).toBe(true);
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({ profiles: { default: { 'base-url': 'https://gw.example.com/social' } } });
  });

  it('reads api-key from stdin, stores the file with mode 0600, and never prints the whole key', async () => {
    const env = { SGQ_CONFIG_DIR: tempDir() };
    const key = 'abcdefghijklmnop1234';
    const set = await runSgq(['config', 'set', 'api-key'], { env, stdin: `${key}\n` });
    expect(set.code).toBe(0);
    expect(set.stdout + set.stderr).not.toContain(key);
    const path = (await runSgq(['config', 'path'], { env })).stdout.trim();
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const get = await runSgq(['config', 'get', 'api-key'], { env });
    expect(get.stdout).toBe('****1234\n');
    const list = await runSgq(['config', 'list'], { env });
    expect(list.stdout).toBe('api-key=****1234\nbase-url=https://toto.oz.xyz\n');
  });

  it('rejects unknown keys and bad values with exit 2', async () => {
    const env = { SGQ_CONFIG_DIR: tempDir() };
    expect((await runSgq(['config', 'set', 'colour', 'red'], { env })).code).toBe(2);
    expect((await runSgq(['config', 'set', 'base-url', 'ftp://x'], { env })).code).toBe(2);
    expect((await runSgq(['config', 'set', 'output', 'xml'], { env })).code).toBe(2);
    expect((await runSgq(['config', 'set', 'api-key'], { env, stdin: '' })).code).toBe(2);
  });

  it('get of an unset key exits 3', async () => {
    expect((await runSgq(['config', 'get', 'api-key'], { env: { SGQ_CONFIG_DIR: tempDir() } })).code).toBe(3);
  });

  it('profiles keep separate settings', async () => {
    const env = { SGQ_CONFIG_DIR: tempDir() };
    await runSgq(['config', 'set', 'base-url', 'http://work.example', '--profile', 'work'], { env });
    await runSgq(['config', 'set', 'base-url', 'http://home.example'], { env });
    expect((await runSgq(['config', 'get', 'base-url', '--profile', 'work'], { env })).stdout).toBe('http://work.example\n');
    expect((await runSgq(['config', 'get', 'base-url'], { env: { ...env, SGQ_PROFILE: 'work' } })).stdout).toBe('http://work.example\n');
    expect((await runSgq(['config', 'get', 'base-url'], { env })).stdout).toBe('http://home.example\n');
  });
});

describe('precedence: flag > env > profile > default', () => {
  it('base-url: --base-url beats SGQ_BASE_URL beats the profile', async () => {
    const env = { SGQ_CONFIG_DIR: tempDir() };
    await runSgq(['config', 'set', 'base-url', 'http://127.0.0.1:1'], { env });
    expect((await runSgq(['config', 'set', 'api-key'], { env, stdin: DEMO_KEY })).code).toBe(0);
    // profile only: the dead address
    expect((await runSgq(['info', '--retries', '0'], { env })).code).toBe(7);
    // env beats profile
    expect((await runSgq(['info'], { env: { ...env, SGQ_BASE_URL: sb.sandbox.url } })).code).toBe(0);
    // flag beats env
    expect((await runSgq(['info', '--base-url', sb.sandbox.url], { env: { ...env, SGQ_BASE_URL: 'http://127.0.0.1:1' } })).code).toBe(0);
  });

  it('api-key: SGQ_API_KEY beats the profile; --profile picks the profile', async () => {
    const env = { SGQ_CONFIG_DIR: tempDir(), SGQ_BASE_URL: sb.sandbox.url };
    await runSgq(['config', 'set', 'api-key'], { env, stdin: 'bad-key-xxxxxxxx' });
    await runSgq(['config', 'set', 'api-key', '--profile', 'good'], { env, stdin: DEMO_KEY });
    expect((await runSgq(['graph', 'followers', 'jack'], { env })).code).toBe(3);
    expect((await runSgq(['graph', 'followers', 'jack'], { env: { ...env, SGQ_API_KEY: DEMO_KEY } })).code).toBe(0);
    expect((await runSgq(['graph', 'followers', 'jack', '--profile', 'good'], { env })).code).toBe(0);
    expect((await runSgq(['graph', 'followers', 'jack'], { env: { ...env, SGQ_PROFILE: 'good' } })).code).toBe(0);
  });

  it('settings from the environment get the same checks as config set (exit 3, naming the variable)', async () => {
    for (const env of [{ SGQ_OUTPUT: 'xml' }, { SGQ_TIMEOUT: 'soon' }, { SGQ_TIMEOUT: '99999' }, { SGQ_TIMEOUT: '1e3' }, { SGQ_RETRIES: '-1' }, { SGQ_BASE_URL: 'ftp://x' }]) {
      const r = await runSgq(['metadata', 'userid', 'jack'], { env: { ...sb.env(), ...env } });
      expect(r.code).toBe(3);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toContain(`(from ${Object.keys(env)[0]})`);
    }
  });

  it('an unknown --profile is a config error', async () => {
    const r = await runSgq(['info', '--profile', 'nope'], { env: { SGQ_BASE_URL: sb.sandbox.url } });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('no profile named "nope"');
  });

  it('the output setting is the default format', async () => {
    const env = { SGQ_CONFIG_DIR: tempDir(), ...sb.env() };
    await runSgq(['config', 'set', 'output', 'csv'], { env });
    expect((await runSgq(['metadata', 'userid', 'jack'], { env })).stdout).toMatch(/^username,user_id\r\n/);
    expect((await runSgq(['metadata', 'userid', 'jack', '-o', 'ndjson'], { env })).stdout).toMatch(/^\{/);
  });
});
