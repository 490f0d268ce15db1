import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { SETTINGS, SETTING_NAMES } from '../../src/core/config.js';
import { sgq } from '../helpers/e2e.js';
import { runSgq, tempDir } from '../helpers/run.js';

// `sgq config list -o json`: every setting, the value a run would take and where it comes from.

type Listed = {
  profile: string;
  config_file: string | null;
  other_profiles: string[];
  settings: { name: string; value: string | null; source: 'flag' | 'environment' | 'profile' | 'default' | null; flag?: string; default?: string; env: string; secret: boolean }[];
};

async function configured(): Promise<Record<string, string>> {
  const env = { SGQ_CONFIG_DIR: tempDir() };
  expect((await runSgq(['config', 'set', 'base-url', 'https://gw.example.com'], { env })).code).toBe(0);
  expect((await runSgq(['config', 'set', 'timeout', '45'], { env })).code).toBe(0);
  expect((await runSgq(['config', 'set', 'api-key'], { env, stdin: 'key-0123456789abcd\n' })).code).toBe(0);
  expect((await runSgq(['config', 'set', 'output', 'csv', '--profile', 'work'], { env })).code).toBe(0);
  return env;
}

describe('sgq config list -o json', () => {
  it('lists every setting in the table order, with its value, source and variable; the key masked', async () => {
    const env = await configured();
    const r = await runSgq(['--retries', '5', 'config', 'list', '-o', 'json'], { env: { ...env, SGQ_TIMEOUT: '12', SGQ_OUTPUT: '' } });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const listed = JSON.parse(r.stdout) as Listed;
    expect(listed.profile).toBe('default');
    expect(listed.config_file).toBe(`${env.SGQ_CONFIG_DIR}/config.json`);
    expect(listed.other_profiles).toEqual(['work']);
    expect(listed.settings.map((s) => s.name)).toEqual(SETTING_NAMES);
    const by = Object.fromEntries(listed.settings.map((s) => [s.name, s]));
    expect(by['api-key']).toEqual({ name: 'api-key', value: '****abcd', source: 'profile', env: 'SGQ_API_KEY', secret: true });
    expect(by['base-url']).toMatchObject({ value: 'https://gw.example.com', source: 'profile' });
    // The environment wins over the profile, and a flag over both.
    expect(by.timeout).toMatchObject({ value: '12', source: 'environment', env: 'SGQ_TIMEOUT' });
    expect(by.retries).toMatchObject({ value: '5', source: 'flag', flag: '--retries' });
    // Unset (an empty variable counts as unset, as for a run): sgq's default applies.
    expect(by.output).toMatchObject({ value: null, source: null });
    for (const s of listed.settings) expect(s.env).toBe(SETTINGS[s.name as keyof typeof SETTINGS].env);
    expect(r.stdout).not.toContain('0123456789');
  });

  it('reads the profile --profile names, and text is still name=value lines of the profile, with the defaults it leaves', async () => {
    const env = await configured();
    const work = JSON.parse((await runSgq(['config', 'list', '-o', 'json', '--profile', 'work'], { env })).stdout) as Listed;
    expect(work.profile).toBe('work');
    expect(work.settings.filter((s) => s.source !== null).map((s) => [s.name, s.value, s.source])).toEqual([
      ['base-url', 'https://toto.oz.xyz', 'default'],
      ['output', 'csv', 'profile'],
    ]);
    const workText = await runSgq(['config', 'list', '--profile', 'work'], { env });
    expect(workText.stdout).toBe('base-url=https://toto.oz.xyz\noutput=csv\n');
    expect(workText.stderr).toContain("base-url is not set in profile work: https://toto.oz.xyz is sgq's default\n");
    const text = await runSgq(['config', 'list', '-o', 'text'], { env });
    expect(text.stdout).toBe((await runSgq(['config', 'list'], { env })).stdout);
    expect(text.stdout).toBe('api-key=****abcd\nbase-url=https://gw.example.com\ntimeout=45\n');
  });

  it('is JSON jq reads from the real binary; another format is a usage error naming config list --help', async () => {
    const env = await configured();
    const out = await sgq(['config', 'list', '-o', 'json'], { env });
    expect(out.exitCode).toBe(0);
    const jq = await execa('jq', ['-r', '.settings[] | select(.source == "profile") | .name'], { input: out.stdout });
    expect(jq.stdout.split('\n')).toEqual(['api-key', 'base-url', 'timeout']);
    const bad = await runSgq(['config', 'list', '-o', 'yaml'], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^sgq: .*'yaml' is invalid.*text, json; see `sgq config list --help`\n$/);
  });
});
