// The built binary against `sgq sandbox --shape service|spec`: --fields, the formats and the
// table over both record shapes, read back by real readers (python3's csv, DuckDB); and the
// sandbox's paging faults end to end.
import { execa } from 'execa';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { recordColumns } from '../../src/parquet/declared.js';
import { sgq, useSandboxProcess } from '../helpers/e2e.js';
import { lines, tempDir } from '../helpers/run.js';
import { SHAPES, checkedField, nameField, recordFields } from '../helpers/sandbox.js';
import { withDuckDb } from '../helpers/duckdb.js';

const USER = 'shapes_1200';
type Row = Record<string, unknown>;
const ndjsonOf = (text: string) => lines(text).map((l) => JSON.parse(l) as Row);

/** Rows as python3's csv module reads them (delimiter `,` or a tab). */
async function pythonCsv(text: string, delimiter = ','): Promise<string[][]> {
  const script = `import csv, json, sys\nprint(json.dumps(list(csv.reader(sys.stdin, delimiter=${JSON.stringify(delimiter)}))))`;
  const r = await execa('python3', ['-c', script], { input: text, encoding: 'utf8' });
  return JSON.parse(r.stdout) as string[][];
}

/** A value as a CSV cell holds it: text as it is, null empty, a number as its JSON text. */
const cell = (v: unknown) => (v === null ? '' : typeof v === 'string' ? v : JSON.stringify(v));

describe.each(SHAPES)('the %s shape, end to end', (shape) => {
  const sb = useSandboxProcess(['--shape', shape]);
  const fields = recordFields(shape);
  const name = nameField(shape);
  const checked = checkedField(shape);
  const run = (args: string[]) => sgq(['graph', 'followers', USER, '--all', ...args], { env: sb.env() });

  it('ndjson: every record has the shape\'s fields in order; ids come out as the service wrote them', async () => {
    const r = await run([]);
    expect(r.exitCode, r.stderr).toBe(0);
    const records = ndjsonOf(r.stdout);
    expect(records).toHaveLength(1200);
    for (const record of records) expect(Object.keys(record)).toEqual(fields);
    expect(new Set(records.map((x) => x[name])).size).toBe(1200);
    const raw = await run(['--raw']);
    const ids = (text: string) => [...text.matchAll(/"(?:follower_)?userid":(\d+)/g)].map((m) => m[1]!);
    expect(ids(r.stdout)).toEqual(ids(raw.stdout));
    if (shape === 'service') {
      expect(ids(r.stdout)).toHaveLength(1200);
      expect(ids(r.stdout).some((id) => BigInt(id) > BigInt(Number.MAX_SAFE_INTEGER))).toBe(true);
      // The text of real profiles: other scripts, ZWJ emoji, tabs and newlines, nulls.
      const texts = records.flatMap((x) => [x.follower_list_name, x.follower_bio, x.follower_location]);
      for (const wanted of ['👨‍👩‍👧‍👦', 'محمد', 'प्रिया', '山田', 'Анна', '\n', '\t']) expect(texts.some((t) => typeof t === 'string' && t.includes(wanted)), wanted).toBe(true);
      expect(texts).toContain(null);
    }
  });

  it('following records carry the same names without the prefix', async () => {
    const r = await sgq(['graph', 'following', 'shapes_3'], { env: sb.env() });
    expect(r.exitCode, r.stderr).toBe(0);
    for (const record of ndjsonOf(r.stdout)) expect(Object.keys(record)).toEqual(recordFields(shape, 'following'));
  });

  it('--fields picks the same values in ndjson, json, csv and tsv', async () => {
    const picked = `${checked},${name}`;
    const nd = ndjsonOf((await run(['--fields', picked])).stdout);
    expect(nd).toHaveLength(1200);
    for (const record of nd) expect(Object.keys(record)).toEqual([checked, name]);
    const expected = nd.map((x) => [x[checked], x[name]]);
    const json = JSON.parse((await run(['--fields', picked, '-o', 'json'])).stdout) as Row[];
    expect(json.map((x) => [x[checked], x[name]])).toEqual(expected);
    const csv = await pythonCsv((await run(['--fields', picked, '-o', 'csv'])).stdout);
    expect(csv[0]).toEqual([checked, name]);
    expect(csv.slice(1)).toEqual(expected);
    const tsv = lines((await run(['--fields', picked, '-o', 'tsv'])).stdout).map((l) => l.split('\t'));
    expect(tsv[0]).toEqual([checked, name]);
    expect(tsv.slice(1)).toEqual(expected);
  });

  it('csv of whole records: python3 reads every field back as the NDJSON export has it', async () => {
    const nd = ndjsonOf((await run([])).stdout);
    const csv = await pythonCsv((await run(['-o', 'csv'])).stdout);
    expect(csv[0]).toEqual(fields);
    expect(csv).toHaveLength(1201);
    // Ids past 2^53 are compared as text by the ndjson test above; the rest cell by cell.
    const comparable = fields.filter((f) => !f.endsWith('userid'));
    for (const [i, record] of nd.entries()) {
      for (const f of comparable) expect(csv[i + 1]![fields.indexOf(f)], `${f} of record ${i}`).toBe(cell(record[f]));
    }
  });

  it('json holds the same records as ndjson', async () => {
    const nd = ndjsonOf((await run([])).stdout);
    expect(JSON.parse((await run(['-o', 'json'])).stdout)).toEqual(nd);
  });

  it('the table (in a pipe): the shape\'s default columns, with --wide a column for each field; a row for each record', async () => {
    const nd = ndjsonOf((await sgq(['graph', 'followers', 'shapes_20'], { env: sb.env() })).stdout);
    const wide = await sgq(['graph', 'followers', 'shapes_20', '-o', 'table', '--wide'], { env: sb.env() });
    expect(wide.exitCode, wide.stderr).toBe(0);
    expect(lines(wide.stdout)[0]!.trim().split(/\s+/)).toEqual(fields);
    const r = await sgq(['graph', 'followers', 'shapes_20', '-o', 'table'], { env: sb.env() });
    expect(r.exitCode, r.stderr).toBe(0);
    // The service's records: a few columns chosen for reading; the spec's two fields: both.
    const defaults = shape === 'service' ? ['username', 'name', 'followers', 'following', 'posts', 'created'] : fields;
    expect(lines(r.stdout)[0]!.trim().split(/\s+/)).toEqual(defaults);
    for (const table of [r, wide]) for (const record of nd) expect(lines(table.stdout).some((l) => l.startsWith(`${record[name] as string} `))).toBe(true);
  });

  it('parquet: DuckDB reads every record with the shape\'s columns', async () => {
    const file = join(tempDir(), 'f.parquet');
    const r = await run(['-o', 'parquet', '--out', file]);
    expect(r.exitCode, r.stderr).toBe(0);
    await withDuckDb(async (connection) => {
      const read = await connection.runAndReadAll(`SELECT * FROM read_parquet('${file}')`);
      // The columns the followers' description declares (both shapes' fields), then _unfit: the shape's among them.
      expect(read.columnNames()).toEqual([...recordColumns('followers').map((c) => c.name), '_unfit']);
      expect(read.columnNames()).toEqual(expect.arrayContaining([...fields]));
      const nd = ndjsonOf((await run([])).stdout);
      expect(read.getRowObjects().map((row) => String(row[name]))).toEqual(nd.map((x) => x[name]));
    });
  });

  it('--jq sees the shape\'s names', async () => {
    const r = await run(['--jq', `.${name}`, '--limit', '3']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(lines(r.stdout)).toEqual(ndjsonOf((await run(['--limit', '3'])).stdout).map((x) => x[name]));
  });
});

describe('the sandbox\'s paging faults, end to end', () => {
  const empty = useSandboxProcess(['--malformed', 'page-empty']);
  const items = useSandboxProcess(['--malformed', 'page-items', '--shape', 'spec']);

  it('page-empty: exit 7 after page 2 with one line saying why, page 1 kept, the resume from page 2', async () => {
    const r = await sgq(['graph', 'followers', 'jack_1200', '--all'], { env: empty.env() });
    expect(r.exitCode).toBe(7);
    expect(lines(r.stdout)).toHaveLength(500);
    expect(lines(r.stderr)).toEqual([
      'sgq: jack_1200: page 2 failed: the service sent an unexpected body: page 2 holds no records but names page 3 as the next; rerun with --verbose or --raw to see it',
      'sgq: jack_1200: records before page 2 were written; resume with: sgq graph followers jack_1200 --page 2 --all',
    ]);
  });

  it('page-items: a --verbose line for each page, and the export is whole', async () => {
    const r = await sgq(['graph', 'followers', 'jack_1200', '--all', '-v'], { env: items.env() });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(lines(r.stdout)).toHaveLength(1200);
    expect(lines(r.stderr).filter((l) => l.includes('page_items'))).toEqual([
      'sgq: jack_1200: page 1: page_items says 501, data holds 500',
      'sgq: jack_1200: page 2: page_items says 501, data holds 500',
      'sgq: jack_1200: page 3: page_items says 201, data holds 200',
    ]);
    const quiet = await sgq(['graph', 'followers', 'jack_1200', '--all'], { env: items.env() });
    expect(quiet.stderr).toBe('');
  });
});
