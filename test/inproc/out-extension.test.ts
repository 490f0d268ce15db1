import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { readParquet } from '../helpers/duckdb.js';
import { lines, ndjson, runSgq, tempDir } from '../helpers/run.js';
import { recordFields, useSandbox } from '../helpers/sandbox.js';

// `--out FILE` without -o on the command line writes the format its extension names, before
// SGQ_OUTPUT or the profile's output; an -o that names another format wins, with one warning.

const sb = useSandbox();
const USER = 'big_700';
const run = (out: string, extra: string[] = [], env: Record<string, string> = {}) =>
  runSgq(['graph', 'followers', USER, '--all', '--out', out, ...extra], { env: { ...sb.env(), ...env } });

/** What a file holds, read as each format, as the records' usernames. */
const READERS: Record<string, (file: string) => Promise<unknown[]> | unknown[]> = {
  ndjson: (file) => ndjson(readFileSync(file, 'utf8')).map((r) => r.follower_username),
  json: (file) => (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>[]).map((r) => r.follower_username),
  csv: (file) => {
    const rows = readFileSync(file, 'utf8').split('\r\n').filter(Boolean);
    expect(rows[0]).toBe(recordFields(sb.shape).join(','));
    return rows.slice(1);
  },
  tsv: (file) => {
    const rows = lines(readFileSync(file, 'utf8'));
    expect(rows[0]).toBe(recordFields(sb.shape).join('\t'));
    return rows.slice(1);
  },
  yaml: (file) => (parseDocument(readFileSync(file, 'utf8')).toJS() as Record<string, unknown>[]).map((r) => r.follower_username),
  parquet: async (file) => (await readParquet(file)).rows.map((r) => r.follower_username),
};

describe('--out FILE without -o: the format its extension names', () => {
  it.each([
    ['f.ndjson', 'ndjson'],
    ['f.jsonl', 'ndjson'],
    ['f.json', 'json'],
    ['F.JSON', 'json'],
    ['f.csv', 'csv'],
    ['f.tsv', 'tsv'],
    ['f.yaml', 'yaml'],
    ['f.yml', 'yaml'],
    ['f.parquet', 'parquet'],
    ['f.txt', 'ndjson'],
    ['followers', 'ndjson'],
  ])('%s holds %s, with nothing on stderr', async (name, format) => {
    const out = join(tempDir(), name);
    const r = await run(out);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(await READERS[format]!(out)).toHaveLength(700);
  });

  it('the extension wins over SGQ_OUTPUT and the profile output setting', async () => {
    const config = tempDir();
    writeFileSync(join(config, 'config.json'), JSON.stringify({ profiles: { default: { output: 'csv' } } }));
    const fromProfile = join(tempDir(), 'f.json');
    expect((await run(fromProfile, [], { SGQ_CONFIG_DIR: config })).code).toBe(0);
    expect(await READERS.json!(fromProfile)).toHaveLength(700);
    const fromEnv = join(tempDir(), 'f.yaml');
    expect((await run(fromEnv, [], { SGQ_OUTPUT: 'tsv' })).code).toBe(0);
    expect(await READERS.yaml!(fromEnv)).toHaveLength(700);
    // A name that says no format still takes the setting.
    const unnamed = join(tempDir(), 'f.out');
    expect((await run(unnamed, [], { SGQ_OUTPUT: 'tsv' })).code).toBe(0);
    expect(await READERS.tsv!(unnamed)).toHaveLength(700);
  });

  it('-o naming another format wins, with one warning; -o naming the same one, or yaml-stream into .yaml, none', async () => {
    const out = join(tempDir(), 'report.json');
    const r = await run(out, ['-o', 'csv']);
    expect(r.code).toBe(0);
    expect(await READERS.csv!(out)).toHaveLength(700);
    expect(r.stderr).toBe(`sgq: -o csv writes csv into ${out}, whose extension says json; rename the file, or leave out -o to write json\n`);
    for (const [name, format] of [['f.json', 'json'], ['f.jsonl', 'ndjson'], ['f.yaml', 'yaml-stream'], ['f.out', 'tsv']]) {
      const quiet = await run(join(tempDir(), name!), ['-o', format!]);
      expect({ name, code: quiet.code, stderr: quiet.stderr }).toEqual({ name, code: 0, stderr: '' });
    }
  });

  it('--dry-run says the same warning and sends nothing', async () => {
    const out = join(tempDir(), 'f.parquet');
    const r = await runSgq(['graph', 'followers', USER, '--out', out, '-o', 'ndjson', '--dry-run'], { env: sb.env() });
    expect(r.code).toBe(0);
    expect(lines(r.stderr)[0]).toBe(`sgq: -o ndjson writes ndjson into ${out}, whose extension says parquet; rename the file, or leave out -o to write parquet`);
  });

  it('--raw and --jq write what they always write, whatever the name', async () => {
    const dir = tempDir();
    expect((await run(join(dir, 'raw.json'), ['--raw'])).code).toBe(0);
    expect(lines(readFileSync(join(dir, 'raw.json'), 'utf8')).map((l) => (JSON.parse(l) as { page: number }).page)).toEqual([1, 2]);
    expect((await run(join(dir, 'names.csv'), ['--jq', '.follower_username'])).code).toBe(0);
    expect(lines(readFileSync(join(dir, 'names.csv'), 'utf8'))).toHaveLength(700);
  });

  it('sgq fmt takes the format from --out too', async () => {
    const dir = tempDir();
    expect((await run(join(dir, 'f.ndjson'))).code).toBe(0);
    const r = await runSgq(['fmt', join(dir, 'f.ndjson'), '--out', join(dir, 'f.yml')]);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(await READERS.yaml!(join(dir, 'f.yml'))).toHaveLength(700);
  });
});

describe('the resume of a run that stopped part-way writes the same format', () => {
  // From page 2 the sandbox sends empty pages that never end: the run stops after page 1.
  const faulty = useSandbox({ shape: 'spec', faults: { malformed: 'page-empty' } });

  it.each([
    ['f.tsv', '-o tsv --fields username,last_checked --no-header >> {out}.partial'],
    ['f.ndjson', '-o ndjson >> {out}.partial'],
    ['f.yaml', '-o yaml --out {dir}/f.2.yaml'],
    ['f.parquet', '-o parquet --out {dir}/f.2.parquet'],
    ['f.json', '-o json --out {dir}/f.2.json'],
  ])('%s: %s', async (name, tail) => {
    const dir = tempDir();
    const out = join(dir, name);
    const r = await runSgq(['graph', 'followers', 'em_1200', '--all', '--out', out], { env: faulty.env() });
    expect(r.code).toBe(7);
    expect(r.stderr).toContain(`resume with: sgq graph followers em_1200 --page 2 --all ${tail.replace('{out}', out).replace('{dir}', dir)}\n`);
  });
});
