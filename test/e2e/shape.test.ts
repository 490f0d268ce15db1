import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments, parseDocument } from 'yaml';
import { recordColumns, typedColumns } from '../../src/parquet/declared.js';
import { sgq, useSandboxProcess } from '../helpers/e2e.js';
import { tempDir } from '../helpers/run.js';
import { readParquet } from '../helpers/duckdb.js';

// The spec's two-field records: these tests pin exact columns and bytes; sandbox-shapes.test.ts
// runs the formats, --fields and the table over both shapes.
const sb = useSandboxProcess(['--shape', 'spec']);

/** The NDJSON records of the same request, to compare every other shape against. */
async function ndjson(args: string[]): Promise<Record<string, unknown>[]> {
  const r = await sgq([...args, '-o', 'ndjson'], { env: sb.env() });
  expect(r.exitCode).toBe(0);
  return r.stdout.split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('output shapes of the built binary', () => {
  const followers = ['graph', 'followers', 'big_1200', '--all'];

  it('-o tsv: a header and one line per record, the same values as ndjson; --no-header drops the header only', async () => {
    const records = await ndjson(followers);
    const r = await sgq([...followers, '-o', 'tsv'], { env: sb.env() });
    expect(r.exitCode).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toBe('username\tlast_checked');
    expect(lines.slice(1)).toEqual(records.map((x) => `${String(x.username)}\t${String(x.last_checked)}`));
    const bare = await sgq([...followers, '-o', 'tsv', '--no-header'], { env: sb.env() });
    expect(bare.stdout.split('\n')).toEqual(lines.slice(1));
    const csv = await sgq([...followers, '-o', 'csv', '--no-header'], { env: sb.env() });
    expect(csv.stdout.split('\r\n')[0]).toBe(`${String(records[0]!.username)},${String(records[0]!.last_checked)}`);
  });

  it('-o yaml: one document, the list of the ndjson records; -o yaml-stream: one document per record', async () => {
    const records = await ndjson(followers);
    const r = await sgq([...followers, '-o', 'yaml'], { env: sb.env() });
    expect(r.exitCode).toBe(0);
    expect(parseDocument(r.stdout).toJS()).toEqual(records);
    const stream = await sgq([...followers, '-o', 'yaml-stream'], { env: sb.env() });
    expect(stream.exitCode).toBe(0);
    expect(parseAllDocuments(stream.stdout).map((d) => d.toJS() as unknown)).toEqual(records);
  });

  it('--fields: a field in no record is one warning on stderr, and the data still flows', async () => {
    const r = await sgq(['graph', 'followers', 'big_10', '--fields', 'username,user_name', '-o', 'csv'], { env: sb.env() });
    expect(r.exitCode).toBe(0);
    expect(r.stdout.split('\r\n')).toHaveLength(11);
    expect(r.stderr).toBe('sgq: --fields: no record has a field "user_name", so its column is empty; check the name (nested fields are written user.username)');
  });
});

describe('--jq in the built binary', () => {
  const followers = ['graph', 'followers', 'big_1200', '--all'];

  it('runs over each record of an --all export: the same usernames as ndjson, raw', async () => {
    const records = await ndjson(followers);
    const r = await sgq([...followers, '--jq', '.username'], { env: sb.env() });
    expect(r.exitCode).toBe(0);
    expect(r.stdout.split('\n')).toEqual(records.map((x) => x.username));
    const objects = await sgq([...followers, '--jq', '{u: .username, tag: $tag, n: $n}', '--arg', 'tag', 'a b', '--argjson', 'n', '12345678901234567890'], { env: sb.env() });
    expect(objects.stdout.split('\n')[0]).toBe(`{"u":${JSON.stringify(records[0]!.username)},"tag":"a b","n":12345678901234567890}`);
    const slurp = await sgq([...followers, '--jq', 'length', '--slurp'], { env: sb.env() });
    expect(slurp.stdout).toBe('1200');
  });

  it('a filter that does not compile is exit 2 before any request (the address has no server)', async () => {
    const r = await sgq(['graph', 'followers', 'jack', '--jq', '.username |'], { env: { SGQ_BASE_URL: 'http://127.0.0.1:9', SGQ_API_KEY: 'k' } });
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^sgq: --jq does not compile: syntax error, unexpected end of file[^\n]*$/);
    const orphan = await sgq(['graph', 'followers', 'jack', '--slurp'], { env: { SGQ_BASE_URL: 'http://127.0.0.1:9', SGQ_API_KEY: 'k' } });
    expect(orphan.exitCode).toBe(2);
    expect(orphan.stderr).toBe('sgq: --slurp works with --jq only; add --jq FILTER');
  });

  it('a runtime error on record 700 stops the run: one line naming it, the 699 results before it kept', async () => {
    const records = await ndjson(followers);
    const bad = String(records[699]!.username);
    const filter = `if .username == "${bad}" then error("not this one") else .username end`;
    const r = await sgq([...followers, '--jq', filter], { env: sb.env() });
    expect(r.exitCode).toBe(1);
    expect(r.stdout.split('\n')).toEqual(records.slice(0, 699).map((x) => x.username));
    expect(r.stderr.split('\n').filter((l) => l.includes('--jq'))).toEqual(['sgq: --jq failed on record 700: not this one; the output holds the results before it']);
    const dir = tempDir();
    const out = join(dir, 'names.txt');
    const file = await sgq([...followers, '--jq', filter, '--out', out], { env: sb.env() });
    expect(file.exitCode).toBe(1);
    expect(existsSync(out)).toBe(false);
    expect(readFileSync(`${out}.partial`, 'utf8')).toBe(`${r.stdout}\n`);
  });
});

describe('sgq fmt: re-rendering offline', () => {
  const followers = ['graph', 'followers', 'big_1200', '--all'];
  // No service, no key, no config: a request would fail with exit 7.
  const offline = { SGQ_BASE_URL: 'http://127.0.0.1:9' };

  it('renders NDJSON records and --raw bodies exactly as the run itself would have, in every format', async () => {
    const dir = tempDir();
    const records = join(dir, 'records.ndjson');
    const raw = join(dir, 'raw.ndjson');
    expect((await sgq([...followers, '--out', records], { env: sb.env() })).exitCode).toBe(0);
    expect((await sgq([...followers, '--raw', '--out', raw], { env: sb.env() })).exitCode).toBe(0);
    for (const shape of [['-o', 'ndjson'], ['-o', 'json'], ['-o', 'csv'], ['-o', 'tsv', '--no-header'], ['-o', 'yaml'], ['-o', 'yaml-stream'], ['--fields', 'last_checked,username', '-o', 'csv'], ['--jq', '.username']]) {
      const direct = await sgq([...followers, ...shape], { env: sb.env() });
      for (const file of [records, raw]) {
        const again = await sgq(['fmt', file, ...shape], { env: offline });
        expect({ shape, file, code: again.exitCode, stderr: again.stderr }).toEqual({ shape, file, code: 0, stderr: '' });
        expect(again.stdout).toBe(direct.stdout);
      }
    }
    const viaStdin = await sgq(['fmt', '-', '-o', 'tsv'], { env: offline, input: readFileSync(raw, 'utf8') });
    expect(viaStdin.stdout.split('\n')).toHaveLength(1201);
  });

  it('detects records and bodies per line, leaves error records out, keeps big integers, writes --out', async () => {
    const lines = [
      '{"id":12345678901234567890,"username":"a"}',
      '{"data":[{"id":2,"username":"b"},{"error":"user not found"}],"next_page":null,"current_credits":5}',
      '',
      '{"username":"c","user":{"id":98765432109876543210}}',
    ];
    const dir = tempDir();
    const out = join(dir, 'out.csv');
    const r = await sgq(['fmt', '-', '-o', 'csv', '--fields', 'username,id,user.id', '--out', out], { env: offline, input: `${lines.join('\n')}\n` });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe('');
    expect(readFileSync(out, 'utf8')).toBe('username,id,user.id\r\na,12345678901234567890,\r\nb,2,\r\nc,,98765432109876543210\r\n');
    const jq = await sgq(['fmt', '--jq', '.id // .user.id'], { env: offline, input: `${lines.join('\n')}\n` });
    expect(jq.stdout).toBe('12345678901234567890\n2\n98765432109876543210');
  });

  it('a line that is not a JSON object, or a file that cannot be read, is exit 2 naming it', async () => {
    const bad = await sgq(['fmt', '-'], { env: offline, input: '{"a":1}\nnot json\n' });
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toBe('sgq: stdin line 2 is not JSON; sgq fmt reads NDJSON records or --raw bodies, one per line');
    const missing = await sgq(['fmt', join(tempDir(), 'none.ndjson')], { env: offline });
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toMatch(/^sgq: cannot read \S+none\.ndjson: ENOENT; /);
  });
});


/** Microseconds since 1970 of an ISO date-time with a zone and at most 6 fractional digits. */
function micros(text: string): bigint {
  const m = /^(.*?)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/.exec(text)!;
  return BigInt(Date.parse(`${m[1]}${m[3]}`)) * 1000n + BigInt((m[2] ?? '').padEnd(6, '0'));
}

describe('-o parquet', () => {
  it('is refused on stdout, before any request', async () => {
    const r = await sgq(['graph', 'followers', 'jack', '-o', 'parquet'], { env: { SGQ_BASE_URL: 'http://127.0.0.1:9', SGQ_API_KEY: 'k' } });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toBe('sgq: -o parquet writes a file, not a stream; add --out FILE.parquet');
  });

  it('DuckDB reads back every value of an export of several row groups, typed, equal to the NDJSON export', async () => {
    const dir = tempDir();
    const file = join(dir, 'followers.parquet');
    const args = ['graph', 'followers', 'big_25000', '--all'];
    const records = await ndjson(args);
    expect((await sgq([...args, '-o', 'parquet', '--out', file], { env: sb.env() })).exitCode).toBe(0);
    const { types, rows } = await readParquet(file);
    // The followers' declared columns, every one (the service's prefixed ones null in the spec's shape), then _unfit.
    expect(types).toEqual(Object.fromEntries(typedColumns(recordColumns('followers')).map((c) => [c.name, c.type])));
    expect(rows).toHaveLength(records.length);
    rows.forEach((row, i) => {
      const record = records[i]!;
      const kept = { username: row.username, last_checked: row.last_checked, follower_username: row.follower_username, _unfit: row._unfit };
      const sent = { username: record.username, last_checked: micros(String(record.last_checked)), follower_username: null, _unfit: null };
      if (JSON.stringify(kept, (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v)) !== JSON.stringify(sent, (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v))) expect({ i, kept }).toEqual({ i, kept: sent });
    });
  });

  it('infers each type from the records: 64-bit integers exact, floats, booleans, timestamps, nested values as JSON, null apart from ""', async () => {
    const lines = [
      '{"id":1234567890123456789,"small":1,"score":1.5,"flag":true,"at":"2024-04-07T10:00:00.123456+02:00","user":{"n":[1,2]},"name":"","huge":123456789012345678901234,"mixed":1}',
      '{"id":-9223372036854775808,"small":null,"score":2,"flag":false,"at":"2024-04-07T23:59:59Z","user":null,"name":null,"huge":1,"mixed":"one"}',
      '{"id":9223372036854775807,"small":-3,"score":-0.25,"flag":null,"at":"1969-12-31T23:59:59.5-05:30","user":[],"name":"x,\\"y\\"\\n","huge":2,"mixed":{"a":1}}',
    ];
    const dir = tempDir();
    const file = join(dir, 'types.parquet');
    const r = await sgq(['fmt', '-', '-o', 'parquet', '--out', file], { input: `${lines.join('\n')}\n` });
    expect(r.exitCode, r.stderr).toBe(0);
    const { types, rows } = await readParquet(file);
    expect(types).toEqual({
      id: 'BIGINT',
      small: 'BIGINT',
      score: 'DOUBLE',
      flag: 'BOOLEAN',
      at: 'TIMESTAMP WITH TIME ZONE',
      user: 'VARCHAR',
      name: 'VARCHAR',
      huge: 'VARCHAR',
      mixed: 'VARCHAR',
    });
    expect(rows).toEqual([
      { id: 1234567890123456789n, small: 1n, score: 1.5, flag: true, at: micros('2024-04-07T10:00:00.123456+02:00'), user: '{"n":[1,2]}', name: '', huge: '123456789012345678901234', mixed: '1' },
      { id: -9223372036854775808n, small: null, score: 2, flag: false, at: micros('2024-04-07T23:59:59Z'), user: null, name: null, huge: '1', mixed: 'one' },
      { id: 9223372036854775807n, small: -3n, score: -0.25, flag: null, at: micros('1969-12-31T23:59:59.5-05:30'), user: '[]', name: 'x,"y"\n', huge: '2', mixed: '{"a":1}' },
    ]);
  });

  it('streams row groups: a 200,000-record export fits a 16 MiB heap', async () => {
    const file = join(tempDir(), 'big.parquet');
    const r = await sgq(['graph', 'followers', 'big_200000', '--all', '-o', 'parquet', '--out', file, '--quiet'], {
      env: sb.env(),
      nodeFlags: ['--max-old-space-size=16'],
      timeout: 90_000,
    });
    expect(r.exitCode, r.stderr.slice(0, 300)).toBe(0);
    const { rows } = await readParquet(file);
    expect(rows).toHaveLength(200_000);
  }, 150_000);
});
