import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GLOBAL_OPTIONS_WITH_VALUES, checksum, entryBytes, readEntry, runKind } from '../../src/cli/start/code-cache.js';
import { globalOptions } from '../../src/cli/program/global-options.js';
import { commandName, ROUTES } from '../../src/core/routes.js';
import { tempDir } from '../helpers/run.js';

// Node 20's code cache (src/cli/start/code-cache.ts): what tells a sound entry from a damaged one or
// one of another build, and which entry a line uses. The e2e test runs it in the built sgq.

const data = Buffer.from(Array.from({ length: 100_000 }, (_, i) => (i * 7919) % 251));

function entryWith(header: string, payload: Uint8Array): string {
  const file = join(tempDir(), 'entry.v8');
  writeFileSync(file, entryBytes(header, payload));
  return file;
}

describe("Node 20's code cache", () => {
  it('reads the data of an entry whose first line names this copy of the bundle', () => {
    expect(readEntry(entryWith('sgq-code-cache 3 10 1 1 7', data), 'sgq-code-cache 3 10 1 1 7')?.equals(data)).toBe(true);
  });

  it('refuses an entry of another copy, a damaged block of data, data cut short or grown, and a file without a first line', () => {
    const header = 'sgq-code-cache 3 10 1 1 7';
    const file = entryWith(header, data);
    expect(readEntry(file, 'sgq-code-cache 3 10 1 1 8')).toBeUndefined();
    const whole = readFileSync(file);
    const start = whole.indexOf(10) + 1;
    for (const [what, bytes] of [
      ['a damaged block', Buffer.concat([whole.subarray(0, start + 4096), Buffer.alloc(512, 0xa5), whole.subarray(start + 4608)])],
      ['cut short', whole.subarray(0, whole.length - 100)],
      ['grown', Buffer.concat([whole, Buffer.alloc(8)])],
      ['no first line', data],
    ] as const) {
      writeFileSync(file, bytes);
      expect(readEntry(file, header), what).toBeUndefined();
    }
    expect(readEntry(join(tempDir(), 'none.v8'), header)).toBeUndefined();
    // A FIFO in its place is refused at once, not waited on.
    const fifo = join(tempDir(), 'fifo.v8');
    execFileSync('mkfifo', [fifo]);
    expect(readEntry(fifo, header)).toBeUndefined();
  });

  it("puts the data on an 8-byte boundary, where V8 takes it without a copy, whatever the first line's length", () => {
    for (let extra = 0; extra < 16; extra++) {
      const header = `sgq-code-cache 3 10 1 1 ${'7'.repeat(1 + extra)}`;
      const bytes = entryBytes(header, data);
      expect(bytes.indexOf(10) % 8, header).toBe(7);
      const read = readEntry(entryWith(header, data), header);
      expect(read?.equals(data), header).toBe(true);
      expect(read!.byteOffset % 8, header).toBe(0);
    }
  });

  it('reads an entry into the buffer it is given when it fits (the bundle\'s, free once its text is made)', () => {
    const header = 'sgq-code-cache 3 10 1 1 7';
    const file = entryWith(header, data);
    const spare = Buffer.alloc(data.length + 100);
    const read = readEntry(file, header, spare);
    expect(read?.equals(data)).toBe(true);
    expect(read!.buffer).toBe(spare.buffer);
    expect(read!.byteOffset % 8).toBe(0);
    expect(readEntry(file, header, Buffer.alloc(10))?.equals(data)).toBe(true);
  });

  it('refuses an entry of the format before, whose data did not lie on a boundary', () => {
    const file = join(tempDir(), 'old.v8');
    writeFileSync(file, Buffer.concat([Buffer.from(`sgq-code-cache 2 10 1 1 7 ${checksum(data)}\n`, 'latin1'), data]));
    expect(readEntry(file, 'sgq-code-cache 3 10 1 1 7')).toBeUndefined();
  });

  it('tells a damaged 512-byte sector wherever it lies, on a sector boundary or not', () => {
    const sound = checksum(data);
    for (let at = 0; at + 512 <= data.length; at += 509) {
      const damaged = Buffer.from(data);
      damaged.fill(0xa5, at, at + 512);
      expect(checksum(damaged), `a sector at ${at}`).not.toBe(sound);
      damaged.fill(0, at, at + 512);
      expect(checksum(damaged), `a zeroed sector at ${at}`).not.toBe(sound);
    }
  });

  it('reads data that does not lie on a 4-byte boundary', () => {
    const odd = Buffer.concat([Buffer.alloc(3), data]).subarray(3);
    expect(checksum(odd)).toBe(checksum(data));
  });

  it('keeps an entry for help, route commands and other commands', () => {
    expect([[], ['--help'], ['graph', '-h'], ['help', 'graph']].map(runKind)).toEqual(['help', 'help', 'help', 'help']);
    expect([['graph', 'followers', 'jack'], ['--quiet', 'alpha', 'scores', 'x']].map(runKind)).toEqual(['route', 'route']);
    expect([['config', 'list'], ['describe', '--json'], ['nope']].map(runKind)).toEqual(['other', 'other', 'other']);
  });

  it("looks past a global option's value for the command", () => {
    const lines = [
      ['--profile', 'work', 'graph', 'followers', 'jack'],
      ['--timeout', '5', '--retries', '0', 'info', 'jack'],
      ['--base-url', 'http://127.0.0.1:8080', '-q', 'lists', 'members', '1'],
      ['--profile=work', 'metadata', 'history', 'jack'],
    ];
    expect(lines.map(runKind)).toEqual(['route', 'route', 'route', 'route']);
    expect([['--profile', 'graph', 'config', 'list'], ['--timeout', '5'], ['--sandbox', 'graph', 'followers', 'jack']].map(runKind)).toEqual(['other', 'other', 'route']);
  });

  it('knows which global options take a value, as the program defines them', () => {
    const withValues = globalOptions().filter((option) => option.required || option.optional);
    expect(withValues.map((option) => option.short).filter(Boolean)).toEqual([]);
    expect(withValues.map((option) => option.long).sort()).toEqual([...GLOBAL_OPTIONS_WITH_VALUES].sort());
  });

  it('takes every route command for a route, from the route table itself (route-words.ts must agree with it)', () => {
    for (const route of ROUTES) expect(runKind([...commandName(route).split(' '), 'x']), commandName(route)).toBe('route');
    expect(runKind(['--quiet', 'info'])).toBe('route');
  });
});
