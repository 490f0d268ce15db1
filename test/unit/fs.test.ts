import { execaSync } from 'execa';
import { chmodSync, mkdirSync, readFileSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { replaceFile } from '../../src/fs/atomic.js';
import { HEARTBEAT_MS, acquireLock } from '../../src/fs/lock.js';
import { readRegularFile, readRegularFileInto } from '../../src/fs/read.js';
import { removeFile } from '../../src/fs/remove.js';
import { STALE_MS, sweepLeftovers } from '../../src/fs/sweep.js';
import { hostTag, shortHash, tempOwner, tempPath } from '../../src/fs/temp-names.js';
import { tempDir } from '../helpers/run.js';

const deadPid = () => Number(execaSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout);

describe('replaceFile', () => {
  it('replaces a file readable by others with one only its owner reads, and leaves no temporary file', () => {
    const dir = tempDir();
    const file = join(dir, 'marks.json');
    writeFileSync(file, 'old');
    chmodSync(file, 0o644);
    replaceFile(file, 'new');
    expect(readFileSync(file, 'utf8')).toBe('new');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(['marks.json']);
  });

  it('throws when it cannot, and leaves nothing behind', () => {
    const dir = tempDir();
    expect(() => replaceFile(join(dir, 'no', 'such', 'f'), 'x')).toThrow(/ENOENT/);
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe('removeFile', () => {
  it('removes a file, and a file already gone is no error', () => {
    const dir = tempDir();
    const file = join(dir, 'flag.call');
    writeFileSync(file, '1');
    removeFile(file);
    expect(readdirSync(dir)).toEqual([]);
    expect(() => removeFile(file)).not.toThrow();
  });

  it('throws on anything else, such as a folder (which it leaves)', () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'sub'));
    expect(() => removeFile(join(dir, 'sub'))).toThrow(/EISDIR|EPERM/);
    expect(readdirSync(dir)).toEqual(['sub']);
  });
});

describe('temporary names', () => {
  it('are this run\'s own, and tell their file, pid and host', () => {
    const name = tempPath('/x/out.ndjson').slice(3);
    expect(name).toMatch(/^\.out\.ndjson\.sgq-\d+-[0-9a-f]{8}-[0-9a-f]{8}\.tmp$/);
    expect(tempOwner(name, 'out.ndjson')).toEqual({ pid: process.pid, host: hostTag() });
    expect(tempOwner(name, 'other')).toBeUndefined();
    expect(tempOwner(name)).toEqual({ pid: process.pid, host: hostTag() });
  });

  it('recognise the names of sgq 2.1, only for their own file', () => {
    expect(tempOwner('.out.ndjson.123.0badf00d.tmp', 'out.ndjson')).toEqual({ pid: 123 });
    expect(tempOwner('marks.json.123.tmp', 'marks.json')).toEqual({ pid: 123 });
    expect(tempOwner('f.lock.stale.123.0badf00d', 'f.lock')).toEqual({ pid: 123 });
    expect(tempOwner('.tmp-123-0badf00d.ndjson.gz')).toEqual({ pid: 123 });
    expect(tempOwner('.tmp-123-0badf00d.ndjson.gz', 'out.ndjson')).toBeUndefined();
    expect(tempOwner('notes.123.tmp', 'out.ndjson')).toBeUndefined();
  });
});

describe('sweepLeftovers', () => {
  it('removes files of dead runs here and old files of other hosts; keeps live and fresh ones', () => {
    const dir = tempDir();
    const other = shortHash('elsewhere');
    const names = {
      dead: `.f.sgq-${deadPid()}-00000001-${hostTag()}.tmp`,
      live: `.f.sgq-${process.pid}-00000002-${hostTag()}.tmp`,
      oldOther: `.f.sgq-1-00000003-${other}.tmp`,
      freshOther: `.f.sgq-1-00000004-${other}.tmp`,
      notOurs: 'f.bak',
    };
    for (const name of Object.values(names)) writeFileSync(join(dir, name), '');
    const old = new Date(Date.now() - 2 * STALE_MS);
    utimesSync(join(dir, names.oldOther), old, old);
    sweepLeftovers(dir, 'f');
    expect(readdirSync(dir).sort()).toEqual([names.live, names.freshOther, names.notOurs].sort());
  });
});

describe('readRegularFile', () => {
  it('refuses a FIFO at once, with nobody at its other end', () => {
    const fifo = join(tempDir(), 'fifo');
    execaSync('mkfifo', [fifo]);
    expect(() => readRegularFile(fifo, 'utf8')).toThrow('it is a FIFO, not a regular file');
    expect(() => readRegularFile('/dev/null')).toThrow('it is a device, not a regular file');
    expect(() => readRegularFileInto(fifo, Buffer.alloc(64))).toThrow('it is a FIFO, not a regular file');
  });

  it('reads into the buffer it is given when the file fits, and into a new one when it does not', () => {
    const file = join(tempDir(), 'f');
    const text = 'ünïcode 字 🙂\tand a tab';
    writeFileSync(file, text);
    const spare = Buffer.alloc(1000, 0xa5);
    const fits = readRegularFileInto(file, spare);
    expect(fits.toString('utf8')).toBe(text);
    expect(fits.buffer).toBe(spare.buffer);
    expect(spare[fits.length]).toBe(0xa5);
    const small = Buffer.alloc(4);
    const grown = readRegularFileInto(file, small);
    expect(grown.toString('utf8')).toBe(text);
    expect(grown.buffer).not.toBe(small.buffer);
    writeFileSync(file, '');
    expect(readRegularFileInto(file, spare).length).toBe(0);
  });
});

describe('the lock\'s heartbeat', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('refreshes the lock file\'s mtime while it is held, and stops when released', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const target = join(tempDir(), 'f');
    const lock = await acquireLock(target, { waitMs: 0, what: 'f' });
    const old = new Date(Date.now() - 2 * STALE_MS);
    utimesSync(lock.file, old, old);
    vi.advanceTimersByTime(HEARTBEAT_MS);
    expect(Date.now() - statSync(lock.file).mtimeMs).toBeLessThan(STALE_MS);
    lock.release();
    expect(vi.getTimerCount()).toBe(0);
  });
});
