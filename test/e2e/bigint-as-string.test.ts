import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sgq, useSandboxProcess } from '../helpers/e2e.js';
import { tempDir } from '../helpers/run.js';
import { envelope, stubServer } from '../helpers/stub-server.js';

// Follower ids are about 1.35e18, past 2^53. jq 1.6 (Debian 12, Ubuntu 22.04) reads every number
// as a double and prints …600000001 as …600000000. --bigint-as-string writes such integers as
// JSON strings, digit for digit, in json, ndjson and yaml: checked with the real jq.
const sb = useSandboxProcess();
const USER = 'ids_40';

/** The machine's jq and its version, e.g. [1, 6]; undefined without one. */
function jqVersion(): [number, number] | undefined {
  const m = /jq-(\d+)\.(\d+)/.exec(spawnSync('jq', ['--version'], { encoding: 'utf8' }).stdout ?? '');
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}
const jq = (args: string[], input: string) => execFileSync('jq', args, { input, encoding: 'utf8' });
const UNSAFE = /(?<=[:[,])(-?\d{16,})(?=[,}\]])/g;
/** The ids past 2^53 in a text, as sent. */
const bigIds = (text: string) => [...text.matchAll(UNSAFE)].map((m) => m[1]!).filter((d) => BigInt(d) > 2n ** 53n || BigInt(d) < -(2n ** 53n));
/** A text as --bigint-as-string writes it: each such integer quoted. */
const quoted = (text: string) => text.replace(UNSAFE, (d) => (BigInt(d) > 2n ** 53n || BigInt(d) < -(2n ** 53n) ? `"${d}"` : d));

const run = async (args: string[], env: Record<string, string> = {}, input?: string) => {
  const r = await sgq(args, { env: { ...sb.env(), ...env }, input });
  expect(r.exitCode, r.stderr).toBe(0);
  return r.stdout;
};
const followers = (...args: string[]) => ['graph', 'followers', USER, '--all', '--quiet', ...args];

describe('--bigint-as-string', () => {
  it('jq 1.6 changes the ids sgq writes as numbers; as strings it prints every digit', async () => {
    const version = jqVersion();
    expect(version, 'jq is installed (.ci/run installs it)').toBeDefined();
    const plain = await run(followers('-o', 'ndjson'));
    const sent = bigIds(plain);
    expect(sent.length).toBeGreaterThan(10);
    const asStrings = await run(followers('-o', 'ndjson', '--bigint-as-string'));
    expect(asStrings).toBe(quoted(plain));
    expect(jq(['-r', '.follower_userid'], asStrings).split('\n').filter((id) => id.length > 15)).toEqual(sent);
    // What the flag is for: jq before 1.7 rounds them (1.7 and later keep a literal it passes through).
    if (version![0] === 1 && version![1] < 7) expect(jq(['-r', '.follower_userid'], plain).split('\n').filter((id) => id.length > 15)).not.toEqual(sent);
  });

  it('json and yaml too; csv, tsv and the table need nothing (text already)', async () => {
    const json = await run(followers('-o', 'json', '--bigint-as-string'));
    expect(json).toBe(quoted(await run(followers('-o', 'json'))));
    expect(jq(['-r', '.[].follower_userid'], json).split('\n').filter((id) => id.length > 15)).toEqual(bigIds(json.replaceAll('"', '')));
    const yaml = await run(followers('-o', 'yaml', '--bigint-as-string'));
    const ids = bigIds(await run(followers('-o', 'ndjson')));
    for (const id of ids) expect(yaml).toContain(`follower_userid: "${id}"`);
    const read = await execa('python3', ['-c', 'import sys, yaml, json; print(json.dumps([d["follower_userid"] for d in yaml.safe_load(sys.stdin)]))'], { input: yaml });
    expect((JSON.parse(read.stdout) as unknown[]).filter((v) => typeof v === 'string')).toEqual(ids);
    for (const format of ['csv', 'tsv', 'table']) {
      const r = await sgq(followers('-o', format, '--bigint-as-string'), { env: sb.env() });
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toMatch(/--bigint-as-string is for json, ndjson and yaml/);
    }
  });

  it('SGQ_BIGINT_AS_STRING=1 and the setting bigint-as-string do the same; --raw stays the body as received', async () => {
    const expected = await run(followers('-o', 'ndjson', '--bigint-as-string'));
    expect(await run(followers('-o', 'ndjson'), { SGQ_BIGINT_AS_STRING: '1' })).toBe(expected);
    const config = tempDir();
    const set = await sgq(['config', 'set', 'bigint-as-string', 'true'], { env: { SGQ_CONFIG_DIR: config } });
    expect(set.exitCode, set.stderr).toBe(0);
    expect(await run(followers('-o', 'ndjson'), { SGQ_CONFIG_DIR: config })).toBe(expected);
    // The environment over the profile: 0 turns it off.
    expect(await run(followers('-o', 'ndjson'), { SGQ_CONFIG_DIR: config, SGQ_BIGINT_AS_STRING: '0' })).toBe(await run(followers('-o', 'ndjson')));
    const raw = await run(followers('--raw'), { SGQ_BIGINT_AS_STRING: '1' });
    expect(bigIds(raw).length).toBeGreaterThan(10);
    // The balance in each body goes down between the two runs; the rest is the same text.
    const balanceless = (text: string) => text.replace(/"current_credits":\d+/g, '');
    expect(balanceless(raw)).toBe(balanceless(await run(followers('--raw'))));
    // Where the setting cannot apply (csv), it is not an error.
    expect(await run(followers('-o', 'csv'), { SGQ_BIGINT_AS_STRING: '1' })).toBe(await run(followers('-o', 'csv')));
    const both = await sgq(followers('--raw', '--bigint-as-string'), { env: sb.env() });
    expect(both.exitCode).toBe(2);
    const bad = await sgq(followers(), { env: { ...sb.env(), SGQ_BIGINT_AS_STRING: 'maybe' } });
    expect(bad.exitCode).toBe(3);
    expect(bad.stderr).toMatch(/bigint-as-string/);
  });

  it('sgq api, sgq fmt and sgq diff write them as strings too', async () => {
    const plain = await run(followers('-o', 'ndjson'));
    const api = await run(['api', 'graph/get_followers', '-f', `user=${USER}`, '-f', 'how=username', '-o', 'ndjson', '-q', '--bigint-as-string']);
    expect(api).toBe(quoted(await run(['api', 'graph/get_followers', '-f', `user=${USER}`, '-f', 'how=username', '-o', 'ndjson', '-q'])));
    expect(bigIds(api).length).toBe(0);
    expect(await run(['fmt', '-', '--bigint-as-string', '-o', 'ndjson'], {}, plain)).toBe(quoted(plain));
    expect(await run(['fmt', '-', '-o', 'ndjson'], { SGQ_BIGINT_AS_STRING: '1' }, plain)).toBe(quoted(plain));
    const dir = tempDir();
    const lines = plain.trimEnd().split('\n');
    writeFileSync(join(dir, 'old.ndjson'), `${lines.slice(0, 30).join('\n')}\n`);
    writeFileSync(join(dir, 'new.ndjson'), `${lines.slice(10).join('\n')}\n`);
    const diff = await run(['diff', join(dir, 'old.ndjson'), join(dir, 'new.ndjson'), '-o', 'ndjson', '--bigint-as-string', '-q']);
    const plainDiff = await run(['diff', join(dir, 'old.ndjson'), join(dir, 'new.ndjson'), '-o', 'ndjson', '-q']);
    expect(bigIds(plainDiff).length).toBeGreaterThan(5);
    expect(diff).toBe(quoted(plainDiff));
    expect(readFileSync(join(dir, 'old.ndjson'), 'utf8')).toContain(bigIds(plain)[0]);
  });
});

describe('--changes with --bigint-as-string', () => {
  const big = (i: number) => `13536391553000000${String(i).padStart(2, '0')}`;
  let list = [1, 2, 3];
  let stub: Awaited<ReturnType<typeof stubServer>>;
  beforeAll(async () => {
    stub = await stubServer(() => ({
      text: JSON.stringify(envelope(1, null, list.map((i) => ({ follower_username: `u${i}`, follower_userid: `@${big(i)}@` })))).replace(/"@(\d+)@"/g, '$1'),
    }));
  });
  afterAll(() => stub.close());

  it('the changes write each gained or lost id as a string', async () => {
    const env = { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k', XDG_DATA_HOME: tempDir() };
    const snap = ['graph', 'followers', 'jack', '--all', '--snapshot', '--changes', '--quiet', '--bigint-as-string', '-o', 'ndjson'];
    expect((await sgq(snap, { env })).exitCode).toBe(0);
    list = [2, 3, 4];
    const r = await sgq(snap, { env });
    expect(r.exitCode, r.stderr).toBe(0);
    const changes = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(changes.map((c) => [c.change, c.follower_userid]).sort()).toEqual([['gained', big(4)], ['lost', big(1)]]);
  });
});
