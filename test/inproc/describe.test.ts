import { Ajv2020 } from 'ajv/dist/2020.js';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/core/errors.js';
import { ROUTES } from '../../src/core/routes.js';
import { SETTING_NAMES } from '../../src/core/config.js';
import { lines, ndjson, runSgq } from '../helpers/run.js';
import { useSandbox } from '../helpers/sandbox.js';

const sb = useSandbox();

interface Described {
  schema_version: number;
  global_options: { name: string; type: string; choices?: string[]; default?: unknown }[];
  commands: { name: string; runnable: boolean; options: { name: string; flags: string; type: string; choices?: string[]; default?: unknown }[]; arguments: { name: string }[] }[];
  settings: { name: string; env: string }[];
  environment: { name: string }[];
  exit_codes: { code: number; kind: string; meaning: string }[];
  routes: { path: string; command: string; library_method: string; paginated: boolean; needs_key: boolean; cost: number | null; cost_assumed: boolean; fields: string[] }[];
  schemas: string[];
}

const describeJson = async (): Promise<Described> => {
  const r = await runSgq(['describe', '--json']);
  expect(r.code).toBe(0);
  expect(r.stderr).toBe('');
  return JSON.parse(r.stdout) as Described;
};

const schema = async (name: string) => {
  const r = await runSgq(['describe', '--schema', name]);
  expect(r.code).toBe(0);
  return new Ajv2020({ strict: false }).compile(JSON.parse(r.stdout) as object);
};

describe('sgq describe --json', () => {
  it('names every route, setting and exit code, with a schema version', async () => {
    const d = await describeJson();
    expect(d.schema_version).toBe(1);
    expect(d.routes.map((r) => r.path)).toEqual(ROUTES.map((r) => `/${r.path}`));
    expect(d.routes.find((r) => r.command === 'graph followers')).toMatchObject({ library_method: 'graph.followers', paginated: true, needs_key: true, cost: 3 });
    expect(d.routes.find((r) => r.command === 'metadata latest-tweets')).toMatchObject({ library_method: 'metadata.latestTweets', cost: 6, cost_assumed: false });
    expect(d.routes.find((r) => r.command === 'metadata follower-count')).toMatchObject({ path: '/metadata/get_follower_count', library_method: 'metadata.followerCount', paginated: false, cost: 2, cost_assumed: false });
    expect(d.routes.find((r) => r.command === 'alpha classification')).toMatchObject({ library_method: 'alpha.classification', cost: 1, cost_assumed: true, fields: ['username', 'userid', 'classification', 'last_checked'] });
    expect(d.routes.find((r) => r.command === 'metadata past-usernames')).toMatchObject({ fields: ['username', 'last_checked'] });
    expect(d.settings.map((s) => s.name)).toEqual(SETTING_NAMES);
    expect(d.exit_codes.map((e) => e.code).sort((a, b) => a - b)).toEqual(Object.values(ExitCode).sort((a, b) => a - b));
    expect(d.environment.map((e) => e.name)).toEqual(expect.arrayContaining(['SGQ_API_KEY', 'SGQ_BASE_URL', 'SGQ_PROFILE', 'HTTPS_PROXY', 'NO_PROXY', 'XDG_CACHE_HOME', 'NODE_DISABLE_COMPILE_CACHE']));
    const followers = d.commands.find((c) => c.name === 'graph followers')!;
    expect(followers.runnable).toBe(true);
    expect(followers.options.find((o) => o.name === '--output')).toMatchObject({ type: 'string', choices: expect.arrayContaining(['ndjson', 'csv']) });
    expect(followers.options.find((o) => o.name === '--limit')).toMatchObject({ type: 'integer', flags: '--limit <n>' });
    expect(followers.options.find((o) => o.name === '--all')).toMatchObject({ type: 'boolean' });
    expect(followers.options.find((o) => o.name === '--how')).toMatchObject({ default: 'username' });
    expect(d.global_options.find((o) => o.name === '--timeout')).toMatchObject({ type: 'number' });
  });

  it('does not drift from --help and the completion scripts', async () => {
    const d = await describeJson();
    const root = fileURLToPath(new URL('../../completions/', import.meta.url));
    const bash = readFileSync(`${root}sgq.bash`, 'utf8');
    const fish = readFileSync(`${root}sgq.fish`, 'utf8');
    for (const command of d.commands) {
      const help = await runSgq([...command.name.split(' '), '--help']);
      expect(help.code, command.name).toBe(0);
      for (const option of command.options) {
        expect(help.stdout, `${command.name} ${option.name} in --help`).toContain(option.flags);
        expect(bash, `${command.name} ${option.name} in bash`).toContain(option.name);
        expect(fish, `${command.name} ${option.name} in fish`).toContain(`-l ${option.name!.replace(/^--/, '')}`);
      }
      for (const word of command.name.split(' ')) expect(bash).toContain(word);
    }
  });
});

describe('JSON Schemas of what sgq prints', () => {
  it('the summary of a real run, of one user and of several, with a failure', async () => {
    const validate = await schema('summary');
    for (const users of [['jack_700'], ['jack_700', 'nobody', 'ann_3']]) {
      const r = await runSgq(['graph', 'followers', ...users, '--all', '--summary', 'json'], { env: sb.env() });
      const summary = JSON.parse(lines(r.stderr).at(-1)!) as object;
      expect(validate(summary), JSON.stringify(validate.errors)).toBe(true);
    }
  });

  it('the records of -o ndjson and -o json', async () => {
    const line = await schema('ndjson');
    const r = await runSgq(['graph', 'followers', 'jack_700', 'ann_2', '--all', '-o', 'ndjson'], { env: sb.env() });
    const records = ndjson(r.stdout);
    expect(records).toHaveLength(702);
    for (const record of records) expect(line(record), JSON.stringify(line.errors)).toBe(true);
    const doc = await schema('json');
    const j = await runSgq(['metadata', 'userid', 'jack', 'ann', '-o', 'json'], { env: sb.env() });
    expect(doc(JSON.parse(j.stdout)), JSON.stringify(doc.errors)).toBe(true);
    expect(doc({ not: 'an array' })).toBe(false);
    expect(line(['not', 'an object'])).toBe(false);
  });

  it('the records of the metadata and alpha routes without pages, their fields described', async () => {
    const line = await schema('ndjson');
    const described = (JSON.parse((await runSgq(['describe', '--schema', 'ndjson'])).stdout) as { properties: Record<string, { description: string }> }).properties;
    for (const field of ['num_followers', 'num_friends', 'num_tweets', 'classification', 'list_name']) expect(described[field]?.description, field).toBeTruthy();
    const commands = ['follower-count', 'past-usernames', 'latest', 'current', 'current-followers', 'current-following', 'current-tweets'].map((v) => ['metadata', v]);
    for (const command of [...commands, ['alpha', 'classification']]) {
      const r = await runSgq([...command, 'jack', 'dorsey', '-o', 'ndjson'], { env: sb.env() });
      expect(r.code, command.join(' ')).toBe(0);
      for (const record of ndjson(r.stdout)) expect(line(record), `${command.join(' ')}: ${JSON.stringify(line.errors)}`).toBe(true);
    }
  });
});
