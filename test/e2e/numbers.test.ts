import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decimalOf } from '../../src/parquet/numbers.js';
import { sgq } from '../helpers/e2e.js';
import { tempDir } from '../helpers/run.js';
import { readParquet } from '../helpers/duckdb.js';
import { numberToken } from '../helpers/number-tokens.js';
import { stubServer } from '../helpers/stub-server.js';

// Numbers leave sgq exactly as the service wrote them, in every format, whatever else is on the
// page; read back by the real jq and DuckDB. The service here is a stub that sends its text as is.

const unusual = [
  '{"username":"a","score":0.12345678901234567890123,"big":1E400,"one":1.0,"nz":-0,"e":2E+3,"f":1e-7,"id":12345678901234567890123,"nested":{"x":[1.50,-0.0]},"last_checked":"2024-01-01T12:34:56.789Z"}',
  '{"username":"b","score":0.5,"big":-1E400,"one":2,"nz":0,"e":3,"f":0.25,"id":5,"nested":{"x":[]},"last_checked":"2024-01-01T12:34:56.789Z"}',
];
// A second page with nothing unusual: it must not change the first page's output, nor be changed.
const ordinary = ['{"username":"c","score":1.5,"big":7,"one":3,"nz":1,"e":4,"f":0.5,"id":6,"nested":{"x":[2]},"last_checked":"2024-01-02T00:00:00.5Z"}'];
// The envelope's numbers as a Python service may write them (`2.0`, `997.0`): sgq reads their value.
const page = (records: string[], next: number | null) =>
  `{"user":"jack","page":${next === null ? 2 : 1},"next_page":${next === null ? null : `${next}.0`},"data":[${records.join(',')}],"current_credits":997.0}`;
const all = [...unusual, ...ordinary];

let stub: Awaited<ReturnType<typeof stubServer>>;
let env: Record<string, string>;
beforeAll(async () => {
  stub = await stubServer((req) => ({ text: /"page":\s*2/.test(req.body) || /page=2/.test(req.url) ? page(ordinary, null) : page(unusual, 2) }));
  env = { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k' };
});
afterAll(() => stub.close());

const followers = ['graph', 'followers', 'jack', '--all'];
const run = async (args: string[], input?: string) => {
  const r = await sgq(args, { env, input });
  expect(r.stderr).toBe('');
  expect(r.exitCode).toBe(0);
  // execa takes off the last line end; it is put back, so that what is compared is what sgq wrote.
  return r.stdout === '' ? '' : `${r.stdout}${args.includes('csv') ? '\r\n' : '\n'}`;
};

/** jq's version as [major, minor], or undefined when no jq is installed. */
function jqVersion(): [number, number] | undefined {
  const r = spawnSync('jq', ['--version'], { encoding: 'utf8' });
  const m = /jq-(\d+)\.(\d+)/.exec(r.stdout ?? '');
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}
const jq = (filter: string, input: string) => execFileSync('jq', ['-c', filter], { input, encoding: 'utf8' });

describe('numbers exactly as sent', () => {
  it('ndjson, json, csv and tsv write every token as sent, across pages with and without unusual numbers', async () => {
    expect(await run([...followers, '-o', 'ndjson'])).toBe(`${all.join('\n')}\n`);
    expect(await run([...followers, '-o', 'json'])).toBe(`[\n${unusual.join(',\n')},\n${ordinary[0]}\n]\n`);
    const csv = (await run([...followers, '-o', 'csv'])).split('\r\n');
    expect(csv[1]).toBe('a,0.12345678901234567890123,1E400,1.0,-0,2E+3,1e-7,12345678901234567890123,"{""x"":[1.50,-0.0]}",2024-01-01T12:34:56.789Z');
    expect(csv[3]).toBe('c,1.5,7,3,1,4,0.5,6,"{""x"":[2]}",2024-01-02T00:00:00.5Z');
    const tsv = (await run([...followers, '-o', 'tsv'])).split('\n');
    expect(tsv[2]).toBe('b\t0.5\t-1E400\t2\t0\t3\t0.25\t5\t{"x":[]}\t2024-01-01T12:34:56.789Z');
  });

  it('--fields, --raw, sgq api and sgq fmt keep them too', async () => {
    expect(await run([...followers, '--fields', 'score,big,nested.x,nz'])).toBe(
      '{"score":0.12345678901234567890123,"big":1E400,"nested.x":[1.50,-0.0],"nz":-0}\n{"score":0.5,"big":-1E400,"nested.x":[],"nz":0}\n{"score":1.5,"big":7,"nested.x":[2],"nz":1}\n',
    );
    const raw = await run([...followers, '--raw']);
    expect(raw).toBe(`${page(unusual, 2)}\n${page(ordinary, null)}\n`);
    expect(await run(['api', 'graph/get_followers', '-f', 'user=jack', '-o', 'ndjson', '-q'])).toBe(`${unusual.join('\n')}\n`);
    expect(await run(['fmt', '-', '-o', 'ndjson'], raw)).toBe(`${all.join('\n')}\n`);
    expect((await run(['fmt', '-', '-o', 'csv', '--fields', 'big,one'], `${all.join('\n')}\n`)).split('\r\n')).toEqual(['big,one', '1E400,1.0', '-1E400,2', '7,3', '']);
  });

  it('a request body sends -F numbers as typed', async () => {
    await run(['api', 'graph/get_followers', '-F', 'user=jack', '-F', 'page=1.0', '-F', 'n=12345678901234567890123', '-o', 'ndjson', '-q']);
    expect(stub.requests.at(-1)!.body).toContain('"page":1.0,"n":12345678901234567890123');
    await run(['api', 'graph/get_followers', '-X', 'GET', '-F', 'n=1.0', '-F', 'e=1E400', '-o', 'ndjson', '-q']);
    expect(stub.requests.at(-1)!.url).toBe('/api/graph/get_followers?n=1.0&e=1E400');
  });

  it('reads the envelope\'s 2.0 and 997.0 as the numbers they are: the next page, the balance', async () => {
    const r = await sgq([...followers, '--summary', 'json'], { env });
    expect(r.exitCode).toBe(0);
    const summary = JSON.parse(r.stderr.trim().split('\n').at(-1)!) as Record<string, unknown>;
    expect(JSON.stringify(summary)).toContain('997');
    expect(r.stdout.split('\n')).toHaveLength(3);
  });

  it('the real jq reads what sgq wrote, every line valid JSON', async () => {
    if (!jqVersion()) return;
    const out = await run([...followers, '-o', 'ndjson']);
    expect(jq('.username', out)).toBe('"a"\n"b"\n"c"\n');
  });

  it('--jq sees the numbers as jq 1.8 does: the literal text of numbers it passes through', async () => {
    const out = await run([...followers, '--jq', '.']);
    // jq 1.8 writes a literal it passes through as decNumber prints it: 1E400 as 1E+400, 1e-7 as 1E-7.
    const expected = all.map((r) => r.replace('1E400', '1E+400').replace('1e-7', '1E-7')).join('\n');
    expect(out).toBe(`${expected}\n`);
    expect(await run([...followers, '--jq', '.score'])).toBe('0.12345678901234567890123\n0.5\n1.5\n');
    // Arithmetic makes a double, as in jq.
    expect(await run([...followers, '--jq', '.score + 0'])).toBe('0.12345678901234568\n0.5\n1.5\n');
    const version = jqVersion();
    if (version && (version[0] > 1 || version[1] >= 8)) {
      const input = `${all.join('\n')}\n`;
      for (const filter of ['.', '.score', '.big', '[.one, .nz, .e, .f]', '.score + 0']) expect(await run([...followers, '--jq', filter]), filter).toBe(jq(filter, input));
    }
  });

  it("Parquet of a route: its declared columns typed, every other field as the exact text sent; DuckDB reads each value exactly", async () => {
    const file = join(tempDir(), 'numbers.parquet');
    await run([...followers, '-o', 'parquet', '--out', file]);
    const { types, rows } = await readParquet(file, { asText: true });
    // The followers' description declares username and last_checked; the other fields are text.
    expect(types).toMatchObject({ username: 'VARCHAR', last_checked: 'TIMESTAMP WITH TIME ZONE', userid: 'BIGINT', score: 'VARCHAR', big: 'VARCHAR', one: 'VARCHAR', f: 'VARCHAR', id: 'VARCHAR', nested: 'VARCHAR', _unfit: 'VARCHAR' });
    expect(rows.map((r) => [r.score, r.big, r.one, r.nz, r.f, r.id, r.nested, r._unfit])).toEqual([
      ['0.12345678901234567890123', '1E400', '1.0', '-0', '1e-7', '12345678901234567890123', '{"x":[1.50,-0.0]}', null],
      ['0.5', '-1E400', '2', '0', '0.25', '5', '{"x":[]}', null],
      ['1.5', '7', '3', '1', '0.5', '6', '{"x":[2]}', null],
    ]);
    // The score history declares score a number: DECIMAL(38,23), every digit.
    const scores = join(tempDir(), 'scores.parquet');
    await run(['alpha', 'score-history', 'jack', '--all', '-o', 'parquet', '--out', scores]);
    const declared = await readParquet(scores, { asText: true });
    expect(declared.types).toMatchObject({ date: 'DATE', score: 'DECIMAL(38,23)', _unfit: 'VARCHAR' });
    expect(declared.rows.map((r) => r.score)).toEqual(['0.12345678901234567890123', '0.50000000000000000000000', '1.50000000000000000000000']);
  });

  it('Parquet of what is no route (sgq fmt): each column typed by its values, a DECIMAL or a string where a double would change them', async () => {
    const file = join(tempDir(), 'numbers.parquet');
    await run(['fmt', '-', '-o', 'parquet', '--out', file], `${all.join('\n')}\n`);
    const { types, rows } = await readParquet(file, { asText: true });
    expect(types).toEqual({
      username: 'VARCHAR',
      score: 'DECIMAL(38,23)',
      big: 'VARCHAR',
      one: 'BIGINT',
      nz: 'BIGINT',
      e: 'BIGINT',
      f: 'DOUBLE',
      id: 'VARCHAR',
      nested: 'VARCHAR',
      last_checked: 'TIMESTAMP WITH TIME ZONE',
    });
    expect(rows.map((r) => [r.score, r.big, r.one, r.f, r.id, r.nested])).toEqual([
      ['0.12345678901234567890123', '1E400', '1', '1e-07', '12345678901234567890123', '{"x":[1.50,-0.0]}'],
      ['0.50000000000000000000000', '-1E400', '2', '0.25', '5', '{"x":[]}'],
      ['1.50000000000000000000000', '7', '3', '0.5', '6', '{"x":[2]}'],
    ]);
  });

  it('Parquet: ordinary numbers keep the types DuckDB read before', async () => {
    const file = join(tempDir(), 'ordinary.parquet');
    const input = `${ordinary[0]}\n{"username":"d","score":2,"big":8,"one":4,"nz":2,"e":5,"f":1,"id":9007199254740993,"nested":{},"last_checked":"2024-01-02T00:00:00Z"}\n`;
    await run(['fmt', '-', '-o', 'parquet', '--out', file], input);
    const { types } = await readParquet(file, { asText: true });
    expect([types.score, types.big, types.f, types.id]).toEqual(['DOUBLE', 'BIGINT', 'DOUBLE', 'BIGINT']);
    expect(readFileSync(file).length).toBeGreaterThan(0);
  });
});

describe('property: Parquet keeps the value of every RFC 8259 number token', () => {
  const token = (maxDigits: number, maxExponent: number) => numberToken(maxDigits, fc.integer({ min: 0, max: maxExponent }).map(String));

  it('a DECIMAL column holds each value; a string column each token as sent (read by DuckDB)', async () => {
    const fits = fc.sample(token(10, 5), { numRuns: 300, seed: 19 });
    const any = fc.sample(token(30, 500), { numRuns: 300, seed: 19 });
    // The first row makes the columns a DECIMAL and a string whatever was drawn.
    const rows = [['0.12345678901234567890123', '1E400'], ...fits.map((t, i) => [t, any[i]!])];
    const dir = tempDir();
    const input = join(dir, 'in.ndjson');
    writeFileSync(input, rows.map(([n, m]) => `{"n":${n},"m":${m}}\n`).join(''));
    const file = join(dir, 'out.parquet');
    await run(['fmt', input, '-o', 'parquet', '--out', file]);
    const read = await readParquet(file, { asText: true });
    expect(read.types.n).toMatch(/^DECIMAL\(\d+,\d+\)$/);
    expect(read.types.m).toBe('VARCHAR');
    read.rows.forEach((row, i) => {
      expect(decimalOf(row.n!), rows[i]![0]).toEqual(decimalOf(rows[i]![0]!));
      expect(row.m).toBe(rows[i]![1]);
    });
  });
});

