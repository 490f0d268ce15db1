import { describe, expect, it } from 'vitest';
import { createFormatter, loadTable, type Format } from '../../src/cli/output/formats.js';
import type { Sink } from '../../src/cli/output/sink.js';
import { parseJson } from '../../src/core/json.js';

function capture(): Sink & { text: string } {
  return {
    text: '',
    closed: false,
    streams: true,
    flushed: true,
    delivered: true,
    write(t: string) {
      this.text += t;
    },
    async drain() {},
    async finish() {
      return undefined;
    },
  };
}

const page1 = [{ username: 'a', last_checked: '2024-04-07T10:00:00.000001+00:00' }, { username: 'b,"c"', last_checked: null }];
const page2 = [{ username: 'd', last_checked: '2024-04-06T10:00:00.000001+00:00', extra: { n: 1 } }];

async function render(format: Format, fields?: string[], warn?: (l: string) => void): Promise<string> {
  await loadTable();
  const sink = capture();
  const f = createFormatter(format, sink, fields, warn);
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
    const sink = capture();
    const f = createFormatter('json', sink);
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

  it('csv: quotes cells with a line break or edge spaces, and reports a late key once', () => {
    const sink = capture();
    const warnings: string[] = [];
    const f = createFormatter('csv', sink, undefined, (l) => warnings.push(l));
    f.write([{ a: ' x', b: 'y ' }] as never);
    f.write([{ a: 'line\nbreak', b: 'plain', late: 1 }, { a: 'q', b: 'r', late: 2 }] as never);
    f.end();
    expect(sink.text).toBe('a,b\r\n" x","y "\r\n"line\nbreak",plain\r\nq,r\r\n');
    expect(warnings).toEqual([expect.stringContaining('"late"')]);
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
    for (const format of ['ndjson', 'json', 'csv', 'table'] as const) {
      const sink = capture();
      const f = createFormatter(format, sink);
      f.write(records as never);
      f.end();
      expect(sink.text).toContain('1234567890123456789');
    }
  });
});
