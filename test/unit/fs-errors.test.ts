import { fstatSync, openSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, expect, it } from 'vitest';
import { ExitCode, failureLine } from '../../src/core/errors.js';
import { closeTemp, createTemp, writerTo } from '../../src/fs/atomic.js';
import { FileError, classify, fileError, fileWarning, openFileLimit, unplacedFileError } from '../../src/fs/file-errors.js';
import { NotRegularFileError } from '../../src/fs/read.js';
import { cliError } from '../../src/cli/program/errors-to-flags.js';
import { tempDir } from '../helpers/run.js';

// The one classification of file-system errors (src/fs/file-errors.ts): every code a writer meets
// is one line saying what failed, where, why and what to do, with the writer's exit code;
// none is "internal error … a bug".

/** An error as Node throws it for a failed system call. */
const systemError = (code: string, syscall = 'write', path = '/data/snapshots/@sandbox/default/x.tmp') =>
  Object.assign(new Error(`${code}: some words, ${syscall} '${path}'`), { code, syscall, path, errno: -1 });

const lineOf = (error: FileError) => failureLine(error.message, error.hint);

describe('fileError', () => {
  const CASES: [string, RegExp][] = [
    ['ENOSPC', /: the disk is full \(ENOSPC\); free some space on it; nothing more was fetched$/],
    ['EDQUOT', /: your disk quota there is used up \(EDQUOT\); free some of your space on that disk, or ask for a larger quota; /],
    ['EROFS', /: the file system is read-only \(EROFS\); mount it read-write, or choose a folder on another disk; /],
    ['EACCES', /: permission denied \(EACCES\); check who may write to \/data\/snapshots\/@sandbox\/default \(ls -ld\), or run sgq as its owner; /],
    ['EPERM', /: operation not permitted \(EPERM\); check who may write to \/data\/snapshots\/@sandbox\/default /],
    ['EMFILE', /: too many open files: sgq met its limit of (\d+ )?open files \(EMFILE\); .*(ulimit -n).*lower --concurrency; /],
    ['ENFILE', /: the system's table of open files is full \(ENFILE\); .*sysctl fs\.file-max.*lower --concurrency; /],
    ['EIO', /: an input\/output error: the disk or the network file system failed \(EIO\); check the disk \(dmesg\) and try again; /],
    ['ENOENT', /: no such file or folder \(ENOENT\); check that \/data\/snapshots\/@sandbox\/default exists /],
    ['ENOTDIR', /: a part of its path is not a folder \(ENOTDIR\); check the path \/data\/snapshots/],
    ['EXDEV', /: some words, write \(EXDEV\); check the path and try again; /],
  ];

  for (const [code, words] of CASES) {
    it(`${code}: one line, what failed and where, why and what to do, with the writer's exit code`, () => {
      for (const exitCode of [ExitCode.internal, ExitCode.config]) {
        const error = fileError(systemError(code), { what: 'cannot store the snapshot of jack in /data/snapshots', exitCode, then: 'nothing more was fetched' });
        expect(error).toBeInstanceOf(FileError);
        expect(error.exitCode).toBe(exitCode);
        expect(error.code).toBe(code);
        const line = lineOf(error);
        expect(line.startsWith('cannot store the snapshot of jack in /data/snapshots: ')).toBe(true);
        expect(line).toMatch(words);
        expect(line).not.toMatch(/\n|internal error|a bug|report it/);
      }
    });
  }

  it('EMFILE names the limit `ulimit -n` shows, when it could be read', () => {
    const limit = openFileLimit();
    const { cause, fix } = classify(systemError('EMFILE', 'open'));
    if (limit === undefined) {
      expect(fix).toContain('ulimit -n');
      return;
    }
    expect(cause).toBe(`too many open files: sgq met its limit of ${limit.soft} open files (EMFILE)`);
    expect(fix).toMatch(/`ulimit -n \d+`/);
    expect(fix).toContain('lower --concurrency');
  });

  it('a file that is not a regular one says what it is; an error of no system call keeps its words', () => {
    expect(fileWarning(new NotRegularFileError('a FIFO'), 'cannot read the --since-last state /x')).toBe('cannot read the --since-last state /x: it is a FIFO, not a regular file; move it away: sgq keeps a regular file there');
    expect(lineOf(fileError(new Error('a column chunk without metadata'), { what: 'cannot write the dataset /d', exitCode: ExitCode.internal }))).toBe('cannot write the dataset /d: a column chunk without metadata');
  });

  it('a writer that only warns gets the same words', () => {
    expect(fileWarning(systemError('ENOSPC'), 'cannot write the cache in /c', 'answers were not cached')).toBe('cannot write the cache in /c: the disk is full (ENOSPC); free some space on it; answers were not cached');
  });
});

describe('a file-system error no writer placed', () => {
  it('is said by its system call and path, exit 1, never as a bug', () => {
    const error = cliError(systemError('ENOSPC', 'write', '/d/.sgq/staging/x.tmp'));
    expect(error.exitCode).toBe(ExitCode.internal);
    expect(failureLine(error.message, error.hint)).toBe('cannot write to /d/.sgq/staging/x.tmp: the disk is full (ENOSPC); free some space on it');
    expect(failureLine(cliError(systemError('EACCES', 'mkdir', '/d/v2')).message)).toBe('cannot create the folder /d/v2: permission denied (EACCES)');
  });

  it('leaves alone what is not the file system\'s: a socket\'s error, a bug, an error sgq already worded', () => {
    expect(unplacedFileError(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET', syscall: 'read' }))).toBeUndefined();
    expect(unplacedFileError(new TypeError('x is undefined'))).toBeUndefined();
    const worded = fileError(systemError('ENOSPC'), { what: 'cannot write to out.ndjson', exitCode: ExitCode.internal });
    expect(cliError(worded)).toBe(worded);
    expect(cliError(new TypeError('x is undefined')).message).toBe('internal error: x is undefined');
  });
});

describe('one owner per descriptor', () => {
  it('a stream into a descriptor never closes it, even when a pipeline destroys it on an error, and says when no write of it is under way any more', async () => {
    const temp = createTemp(join(tempDir(), 'f'));
    const big = Buffer.alloc(16 << 20, 97);
    const failing = Readable.from(
      (async function* () {
        yield big;
        // The error comes while the 16 MiB write is under way on the thread pool.
        throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
      })(),
    );
    const out = writerTo(temp.fd);
    await expect(pipeline(failing, out)).rejects.toThrow('no space left');
    await out.idle();
    // Still this file's descriptor (the owner's one close is the only one), and no write is left to land after the owner closes it.
    expect(fstatSync(temp.fd).isFile()).toBe(true);
    expect(statSync(temp.path).size).toBe(big.length);
    closeTemp(temp);
    expect(temp.fd).toBe(-1);
    // A second close is a no-op, never a close of whatever file took the number meanwhile.
    const other = openSync(temp.path, 'r');
    closeTemp(temp);
    expect(fstatSync(other).isFile()).toBe(true);
  });
});
