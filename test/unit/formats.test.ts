import { describe, expect, it } from 'vitest';
import { createFormatter, type Format } from '../../src/cli/formats/formats.js';
import { captureSink } from '../helpers/sink.js';
import { parseJson } from '../../src/core/json.js';
import { parseAllDocuments, parseDocument } from 'yaml';
import { shareWidths } from '../../src/cli/formats/table.js';

const page1 = [{ username: 'a', last_checked: '2024-04-07T10:00:00.000001+00:00' }, { username: 'b,"c"', last_checked: null }];
const page2 = [{ username: 'd', last_checked: '2024-04-06T10:00:00.000001+00:00', extra: { n: 1 } }];

async function render(format: Format, fields?: string[], warn?: (l: string) => void): Promise<string> {
  const sink = captureSink();
  const f = await createFormatter(format, sink, { fields, warn });
  f.write(page1 as never);
  f.write(page2 as never);
  f.end();
  return sink.text;
}

describe('formatters', () => {
  it('ndjson: one record per line, as sent', async () => {
    const text = await render('ndjson');
    expect(text.split('\n').filter(Boolean).map((l) => JSON.parse(l))).toEqual([...page1, ...page2]);
  });

  it('json: one valid array across pages', async () => {
    expect(JSON.parse(await render('json'))).toEqual([...page1, ...page2]);
  });

  it('json: an empty result is []', async () => {
    const sink = captureSink();
    const f = await createFormatter('json', sink);
    f.end();
    expect(sink.text).toBe('[]\n');
  });

  it('csv: RFC 4180 quoting and CRLF, header from the first page, later keys reported', async () => {
    const warnings: string[] = [];
    const text = await render('csv', undefined, (l) => warnings.push(l));
    expect(text).toBe(
      'username,last_checked\r\na,2024-04-07T10:00:00.000001+00:00\r\n"b,""c""",\r\nd,2024-04-06T10:00:00.000001+00:00\r\n',
    );
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('extra');
  });

  it('csv: quotes cells with a line break or edge spaces, and reports a late key once', async () => {
    const sink = captureSink();
    const warnings: string[] = [];
    const f = await createFormatter('csv', sink, { warn: (l) => warnings.push(l) });
    f.write([{ a: ' x', b: 'y ' }] as never);
    f.write([{ a: 'line\nbreak', b: 'plain', late: 1 }, { a: 'q', b: 'r', late: 2 }] as never);
    f.end();
    expect(sink.text).toBe('a,b\r\n" x","y "\r\n"line\nbreak",plain\r\nq,r\r\n');
    expect(warnings).toEqual([expect.stringContaining('"late"')]);
  });

  it('table on a terminal: each page is printed as it comes, in the columns and widths of the first page', async () => {
    const sink = captureSink();
    const warnings: string[] = [];
    const f = await createFormatter('table', sink, { width: 40, warn: (l) => warnings.push(l) });
    f.write([{ name: 'ann', n: 1 }] as never);
    // Printed before the run ends: the pager shows it while later pages wait.
    // The first page sets the columns: 4 and 1 wide, each given room to grow to 8 and 2.
    expect(sink.text).toBe('name      n\nann       1\n');
    f.write([{ name: 'a much longer name than the first page had', n: 22, late: true }] as never);
    f.end();
    expect(sink.text.split('\n')[2]).toBe('a much…   22');
    expect(warnings).toEqual([expect.stringContaining('--fields')]);
  });

  it('--fields selects and orders columns in every format', async () => {
    expect((await render('csv', ['extra', 'username'])).split('\r\n')[0]).toBe('extra,username');
    expect((await render('csv', ['extra', 'username'])).split('\r\n')[3]).toBe('"{""n"":1}",d');
    expect(JSON.parse((await render('ndjson', ['username'])).split('\n')[0]!)).toEqual({ username: 'a' });
    expect(Object.keys(JSON.parse(await render('json', ['last_checked', 'username']))[0])).toEqual(['last_checked', 'username']);
    const table = await render('table', ['username']);
    expect(table).toContain('username');
    expect(table).not.toContain('last_checked');
  });

  it('table: every column and row, no colour codes', async () => {
    const text = await render('table');
    for (const word of ['username', 'last_checked', 'extra', 'b,"c"', '{"n":1}']) expect(text).toContain(word);
    expect(text).not.toMatch(/\u001b\[/);
  });

  it('keeps big integers exact in every format', async () => {
    const records = [parseJson('{"id":1234567890123456789}')];
    for (const format of ['ndjson', 'json', 'csv', 'tsv', 'yaml', 'yaml-stream', 'table'] as const) {
      const sink = captureSink();
      const f = await createFormatter(format, sink);
      f.write(records as never);
      f.end();
      expect(sink.text).toContain('1234567890123456789');
    }
  });
  it('tsv: one line per record, tab, line breaks and backslash escaped, header from the first page', async () => {
    const sink = captureSink();
    const f = await createFormatter('tsv', sink);
    f.write([{ a: 'tab\there', b: 'two\nlines\r' }, { a: 'back\\slash', b: null }] as never);
    f.write([{ a: { n: 1 }, b: '' }] as never);
    f.end();
    expect(sink.text).toBe('a\tb\ntab\\there\ttwo\\nlines\\r\nback\\\\slash\t\n{"n":1}\t\n');
    expect(sink.text.split('\n')).toHaveLength(5);
  });

  it('--no-header (header: false) leaves the header line out of csv and tsv, and only it', async () => {
    for (const format of ['csv', 'tsv'] as const) {
      const sink = captureSink();
      const f = await createFormatter(format, sink, { header: false });
      f.write(page1 as never);
      f.end();
      expect(sink.text.split(/\r?\n/)[0]).toBe(format === 'csv' ? 'a,2024-04-07T10:00:00.000001+00:00' : 'a\t2024-04-07T10:00:00.000001+00:00');
      expect(sink.text).not.toContain('username');
    }
  });

  it('yaml: one document, a list written record by record; strings that look like other types quoted', async () => {
    const records = [{ s: '123', t: 'true', n: null, e: '', nested: { list: [1, 'x'] } }, {}, { s: 'line\nbreak' }];
    const sink = captureSink();
    const f = await createFormatter('yaml', sink);
    f.write(records.slice(0, 1) as never);
    const first = sink.text;
    f.write(records.slice(1) as never);
    f.end();
    expect(first).toBe('- s: "123"\n  t: "true"\n  "n": null\n  e: ""\n  nested:\n    list:\n      - 1\n      - x\n');
    expect(parseDocument(sink.text).toJS()).toEqual(records);
    expect(sink.text).not.toContain('---');
  });

  it('yaml: no records is the empty list', async () => {
    const sink = captureSink();
    const f = await createFormatter('yaml', sink);
    f.write([]);
    f.end();
    expect(sink.text).toBe('[]\n');
  });

  it('yaml-stream: one document per record, none for no records', async () => {
    const records = [{ s: '123', t: 'true', n: null, e: '', nested: { list: [1, 'x'] } }, { s: 'line\nbreak' }];
    const sink = captureSink();
    const f = await createFormatter('yaml-stream', sink);
    f.write(records as never);
    f.end();
    const docs = parseAllDocuments(sink.text);
    expect(Array.isArray(docs) && docs.map((d) => d.toJS())).toEqual(records);
    expect(sink.text.match(/^---$/gm)).toHaveLength(2);
    const empty = captureSink();
    const e = await createFormatter('yaml-stream', empty);
    e.end();
    expect(empty.text).toBe('');
  });

  it('yaml and yaml-stream: integers past 2^53 keep every digit (read back as BigInt)', async () => {
    for (const format of ['yaml', 'yaml-stream'] as const) {
      const sink = captureSink();
      const f = await createFormatter(format, sink);
      f.write([parseJson('{"id":12345678901234567890,"x":1.5}')] as never, true);
      f.end();
      const doc = parseAllDocuments(sink.text, { intAsBigInt: true });
      const read = Array.isArray(doc) && doc[0]!.toJS();
      expect(format === 'yaml' ? (read as unknown[])[0] : read).toEqual({ id: 12345678901234567890n, x: 1.5 });
    }
  });

  it('--fields reaches into nested objects with dotted paths; a key with a dot is taken as it is', async () => {
    const sink = captureSink();
    const f = await createFormatter('ndjson', sink, { fields: ['user.username', 'user.stats.n', 'a.b', 'user.missing'] });
    f.write([{ user: { username: 'u', stats: { n: parseJson('12345678901234567890') } }, 'a.b': 1 }, { user: 'not an object' }] as never);
    f.end();
    expect(sink.text).toBe(
      '{"user.username":"u","user.stats.n":12345678901234567890,"a.b":1,"user.missing":null}\n{"user.username":null,"user.stats.n":null,"a.b":null,"user.missing":null}\n',
    );
  });

  it('--fields: a field in no record at all is a warning, once, in every format; a field in some record is not', async () => {
    for (const format of ['ndjson', 'csv', 'tsv', 'json', 'yaml', 'yaml-stream', 'table'] as const) {
      const warnings: string[] = [];
      await render(format, ['username', 'usernme', 'extra'], (l) => warnings.push(l));
      expect(warnings).toEqual([expect.stringContaining('"usernme"')]);
    }
    const warnings: string[] = [];
    const sink = captureSink();
    const f = await createFormatter('ndjson', sink, { fields: ['nothing'], warn: (l) => warnings.push(l) });
    f.end();
    expect(warnings).toEqual([]);
  });

  it('table: a header and one line per record, no rules; null (empty) apart from "" and "null", nested values compact, line breaks escaped', async () => {
    const sink = captureSink();
    const f = await createFormatter('table', sink);
    f.write([{ a: null, b: '', c: { x: [1, 2] }, d: 'two\nlines' }, { a: 1, b: 'null' }] as never);
    f.end();
    expect(sink.text).toBe('a  b     c            d\n   ""    {"x":[1,2]}  two\\nlines\n1  null\n');
  });

  it('table: columns share a width; narrow ones keep theirs, long cells are cut with …', async () => {
    expect(shareWidths([4, 30, 50], 200)).toEqual([4, 30, 50]);
    expect(shareWidths([4, 30, 50], 40)).toEqual([4, 16, 16]);
    expect(shareWidths([10, 10], 3)).toEqual([1, 1]);
    const sink = captureSink();
    const f = await createFormatter('table', sink, { width: 20 });
    f.write([{ n: 7, line: 'a long line of text that does not fit' }] as never);
    f.end();
    // 20 columns, the last two left free.
    expect(sink.text).toBe('n  line\n7  a long line of…\n');
    for (const line of sink.text.split('\n')) expect(line.length).toBeLessThanOrEqual(20);
  });
});
