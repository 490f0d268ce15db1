import {
  accessSync, constants, createWriteStream, fstatSync, fsyncSync, ftruncateSync, lstatSync, readSync, readlinkSync, statSync, type Stats,
} from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { ExitCode, SgqError, usageError } from '../../core/errors.js';
import { closeTemp, createTemp, moveIntoPlace, sealTemp, writeAll, writerTo, type FdWriter, type TempFile } from '../../fs/atomic.js';
import { fileError } from '../../fs/file-errors.js';
import { acquireLock, type Lock, type LockOptions } from '../../fs/lock.js';
import { PRIVATE_FILE, keepOwner, modeOf } from '../../fs/modes.js';
import { sweepLeftovers } from '../../fs/sweep.js';
import { removeFile } from '../../fs/remove.js';

/**
 * Where the data goes: stdout, or a file that appears only when the run succeeds.
 * Writes are whole pages, so lines of different users never interleave.
 */
export interface Sink {
  write(chunk: string | Uint8Array): void;
  /** Resolves when the destination has taken what was written (backpressure). */
  drain(): Promise<void>;
  /** The destination is gone (a closed pipe) or broken: stop fetching. */
  readonly closed: boolean;
  /** Set when the data could not be written (a full disk): the run must fail, not end quietly. */
  readonly failure?: SgqError;
  /** Finishes the output; `ok` says whether the run succeeded. Returns a note for stderr, if any. */
  finish(ok: boolean): Promise<string | undefined>;
  /** Records reach the destination as they are written (stdout, a FIFO), not at a final rename. */
  readonly streams: boolean;
  /** Everything written so far has been handed to the system: a chunk written may be filled again (--jq's batch buffers). */
  readonly flushed: boolean;
  /** After finish: every record written reached its destination (a replaced file is in place). */
  readonly delivered: boolean;
}

/**
 * What stdout and `--out` share: a write error stops fetching and fails the run, unless its
 * code is `endCode`, the destination's normal way to end.
 */
abstract class StreamBackedSink implements Sink {
  closed = false;
  failure?: SgqError;

  constructor(
    protected readonly stream: Writable,
    protected readonly where: string,
    private readonly onClose: () => void,
    endCode?: string,
  ) {
    stream.on('error', (error: NodeJS.ErrnoException) => this.fail(endCode === undefined || error.code !== endCode ? outputError(where, error) : undefined));
  }

  /** The destination failed (or ended, without a failure): stop fetching, once. */
  protected fail(failure: SgqError | undefined): void {
    if (this.closed) return;
    this.closed = true;
    this.failure ??= failure;
    this.onClose();
  }

  write(chunk: string | Uint8Array): void {
    if (!this.closed) this.stream.write(chunk);
  }

  async drain(): Promise<void> {
    if (!this.closed && !this.stream.destroyed && this.stream.writableNeedDrain) await this.drained();
  }

  /** Waits for 'drain' (or the stream to fail or close), in the one wait every job shares (drained below). */
  protected drained(): Promise<void> {
    return drained(this.stream);
  }

  get flushed(): boolean {
    return !this.closed && this.stream.writableLength === 0;
  }

  /** Ends the stream and waits until it has written everything or failed, even if that already happened. */
  protected async end(): Promise<void> {
    if (!this.stream.writableEnded && !this.stream.destroyed) this.stream.end();
    // finished() also settles for a stream that finished or failed before the call.
    await finished(this.stream).catch(() => undefined);
  }

  get delivered(): boolean {
    return this.flushed && !this.failure;
  }

  abstract readonly streams: boolean;
  abstract finish(ok: boolean): Promise<string | undefined>;
}

/** stdout; a reader that exits (`| head`) makes `closed` true and calls `onClose`. */
export class StreamSink extends StreamBackedSink {
  /** stdout is a regular file (`> FILE`): written in full or failed, at once, and flushed to disk at the end. */
  private readonly fileFd?: number;

  constructor(stream: Writable, onClose: () => void) {
    // EPIPE is the normal end of `sgq … | head`.
    super(stream, 'stdout', onClose, 'EPIPE');
    this.fileFd = regularFileFd(stream);
  }

  readonly streams = true;

  /**
   * Waits until the reader's side has taken every byte written, not merely until Node's
   * buffer is below its mark: into a pager or a slow pipe, the run then fetches at most one
   * page beyond what the system holds for the reader. (`--out` keeps the looser wait: a file
   * takes what it is given.)
   */
  override async drain(): Promise<void> {
    // A reader that went away during the write (EPIPE) destroyed the stream at once; its
    // 'error' comes a tick later: let it close the sink before the run asks another page.
    if (!this.closed && this.stream.destroyed) await new Promise((next) => setImmediate(next));
    if (this.closed || this.stream.destroyed || this.stream.writableLength === 0) return;
    await Promise.race([new Promise<void>((done) => this.stream.write('', () => done())), this.drained()]);
  }

  /**
   * Into a regular file, every byte is written before this returns, or the sink fails now:
   * Node's own stream for a file drops the rest of a short write (a full disk takes part of
   * a write, then refuses the rest), and reports errors a tick later than a commit may look.
   */
  override write(chunk: string | Uint8Array): void {
    if (this.fileFd === undefined) return super.write(chunk);
    if (this.closed) return;
    try {
      writeAll(this.fileFd, chunk);
    } catch (error) {
      this.fail(outputError('stdout', error));
    }
  }

  /** Waits until every record has been handed to the system (stdout itself stays open); a file is flushed to disk. */
  async finish(): Promise<string | undefined> {
    if (!this.closed && !this.stream.destroyed && this.stream.writableLength > 0) {
      await new Promise<void>((done) => this.stream.write('', () => done()));
    }
    if (this.fileFd !== undefined && !this.closed) {
      try {
        fsyncSync(this.fileFd);
      } catch (error) {
        // EINVAL/ENOTSUP: a file system without fsync; the bytes were written, nothing to add.
        const code = (error as NodeJS.ErrnoException).code;
        if (code !== 'EINVAL' && code !== 'ENOTSUP') this.fail(outputError('stdout', error));
      }
    }
    return undefined;
  }
}

/** The fd behind stdout when it is a regular file. */
function regularFileFd(stream: Writable): number | undefined {
  const fd = (stream as { fd?: unknown }).fd;
  if (typeof fd !== 'number') return undefined;
  try {
    return fstatSync(fd).isFile() ? fd : undefined;
  } catch {
    return undefined;
  }
}

/** What `--out FILE` points at: a regular file (or none yet) to replace, or anything else to write through. */
export type OutTarget =
  | { kind: 'replace'; file: string; path: string; stat?: Stats }
  | { kind: 'through'; file: string; path: string };

/** /dev and /proc: their links (/dev/stdout, /proc/self/fd/1 → pipe:[…]) lead to no file that could be replaced. */
const SPECIAL = /^\/(dev|proc)\//;

/**
 * Follows symbolic links to what they name: a link stays a link and its target is replaced.
 * Names under /dev and /proc (/dev/stdout, /dev/fd/63 of a process substitution), and links
 * that lead there, are written through whatever they lead to, as is anything that is not a
 * regular file.
 */
export function outTarget(file: string): OutTarget {
  const given = resolve(file);
  let path = given;
  for (let links = 0; links < 40; links++) {
    if (SPECIAL.test(path)) return { kind: 'through', file, path: given };
    let stat: Stats;
    try {
      stat = lstatSync(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'replace', file, path };
      throw fileError(error, { what: `cannot write --out ${file}`, exitCode: ExitCode.usage, then: 'nothing was fetched' });
    }
    if (stat.isSymbolicLink()) {
      path = resolve(dirname(path), readlinkSync(path));
      continue;
    }
    if (stat.isDirectory()) throw usageError(`--out ${file} is a folder`);
    return stat.isFile() ? { kind: 'replace', file, path, stat } : { kind: 'through', file, path: given };
  }
  throw usageError(`--out ${file}: too many levels of symbolic links`);
}

/**
 * `--out FILE`. A regular file is written to a temporary file beside it, flushed to disk and
 * renamed into place on success, so FILE is never half-written; it keeps its mode. On failure
 * FILE keeps its old contents and what was written is kept as FILE.partial, since it was
 * paid for. Anything else (a FIFO, a device) is written straight through.
 */
export class FileSink extends StreamBackedSink {
  /** True once the new file is in place under its name. */
  inPlace = false;
  private finished?: Promise<string | undefined>;

  private constructor(
    private readonly target: OutTarget,
    stream: Writable,
    /** The temporary file, whose descriptor this sink alone closes (in finish); its stream never does. */
    private readonly temp?: TempFile & { mode: number; writer: FdWriter },
    onClose: () => void = () => undefined,
  ) {
    super(stream, target.file, onClose);
  }

  static open(target: OutTarget, onClose: () => void): FileSink {
    if (target.kind === 'through') return new FileSink(target, createWriteStream(target.path, { flags: 'a' }), undefined, onClose);
    sweepLeftovers(dirname(target.path), basename(target.path));
    // An existing file keeps its mode; a new one holds data: owner only.
    const mode = target.stat ? modeOf(target.stat) : PRIVATE_FILE;
    let temp: TempFile;
    try {
      // Created exclusively, no more readable than the file it stands for; read back to cut a torn last line.
      temp = createTemp(target.path, mode);
    } catch (error) {
      throw outputError(`a temporary file beside ${target.file}`, error, 'nothing was fetched');
    }
    const writer = writerTo(temp.fd);
    return new FileSink(target, writer, Object.assign(temp, { mode, writer }), onClose);
  }

  get streams(): boolean {
    return this.target.kind === 'through';
  }

  override get delivered(): boolean {
    return this.temp ? this.inPlace : super.delivered;
  }

  /** Finishes once: a second call gets the first one's answer. */
  finish(ok: boolean): Promise<string | undefined> {
    this.finished ??= this.finishOnce(ok);
    return this.finished;
  }

  private async finishOnce(ok: boolean): Promise<string | undefined> {
    await this.end();
    if (!this.temp) return undefined;
    // Closed below: no write may still be running into it.
    await this.temp.writer.idle();
    const { path, fd, mode } = this.temp;
    try {
      if (!this.failure) {
        try {
          // umask may have narrowed it at creation; and the bytes must be on disk before the rename.
          keepOwner(fd, this.target.kind === 'replace' ? this.target.stat : undefined);
          sealTemp(fd, { mode });
        } catch (error) {
          this.failure = outputError(this.target.file, error);
        }
      }
      if (this.failure) truncateToLastLine(fd);
    } finally {
      closeTemp(this.temp);
    }
    if (!this.failure && ok) {
      try {
        moveIntoPlace(path, this.target.path);
        this.inPlace = true;
        return undefined;
      } catch (error) {
        // Not even then may the records stay in a hidden file: they go to FILE.partial below.
        this.failure = outputError(this.target.file, error);
      }
    }
    const note = keepPartial(path, this.target, this.failure !== undefined);
    if (!this.failure) return note;
    this.failure = new SgqError(this.failure.exitCode, `${this.failure.message}; ${note}`, this.failure.hint);
    return undefined;
  }
}

/** Moves what was written to FILE.partial, and says where it went (or that it could not be kept). */
function keepPartial(temp: string, target: OutTarget, failed: boolean): string {
  // Named as the user named FILE, unless FILE is a link: then beside its target.
  const partial = `${target.path === resolve(target.file) ? target.file : target.path}.partial`;
  const unchanged = `${target.file} ${target.kind === 'replace' && target.stat ? 'left unchanged' : 'not created'}`;
  // An empty FILE.partial would keep nothing and only need removing.
  if (sizeOf(temp) === 0) {
    removeFile(temp);
    return `${unchanged}; ${failed ? 'no complete record had been written' : 'no record had been written to it'}`;
  }
  try {
    moveIntoPlace(temp, partial, { durable: false });
    return `${unchanged}; the records ${failed ? 'written before the failure' : 'fetched before the failure'} are in ${partial}`;
  } catch (error) {
    removeFile(temp);
    return `${unchanged}; the records fetched could not be kept in ${partial} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}) and are lost`;
  }
}

const sizeOf = (path: string): number => {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
};

/** A write cut short leaves half a line; cut the file back to its last complete line. */
function truncateToLastLine(fd: number): void {
  try {
    let end = fstatSync(fd).size;
    const chunk = Buffer.alloc(64 * 1024);
    while (end > 0) {
      const start = Math.max(0, end - chunk.length);
      const read = readSync(fd, chunk, 0, end - start, start);
      const newline = chunk.subarray(0, read).lastIndexOf(10);
      if (newline >= 0) {
        ftruncateSync(fd, start + newline + 1);
        return;
      }
      end = start;
    }
    ftruncateSync(fd, 0);
  } catch {
    // Keep it as it is: a torn last line is better than nothing.
  }
}

/**
 * The lock of a file --out replaces: one run at a time, since a second would lose the first
 * one's data. What is written through (a FIFO, a device) needs none.
 */
export async function lockOut(out: OutTarget | undefined, options: Omit<LockOptions, 'what'>): Promise<Lock | undefined> {
  return out?.kind === 'replace' ? acquireLock(out.path, { ...options, what: `--out ${out.file}` }) : undefined;
}

/** What --out FILE names, refused before any work is done when it cannot be written. */
export function checkOutFile(file: string): OutTarget {
  const target = outTarget(file);
  if (target.kind === 'through') return target;
  try {
    accessSync(dirname(target.path), constants.W_OK);
  } catch {
    throw usageError(`cannot write --out ${file}: its folder does not exist or is not writable`);
  }
  return target;
}

/** The wait in progress on each stream, which every job waiting on it shares. */
const draining = new WeakMap<Writable, Promise<void>>();

/**
 * Waits for 'drain', or for the stream to fail or close; removes every listener it added.
 * Jobs waiting at once share one wait: a listener each would pass Node's limit of ten and
 * print a MaxListenersExceededWarning on the user's stderr.
 */
function drained(stream: Writable): Promise<void> {
  let wait = draining.get(stream);
  if (wait === undefined) {
    wait = drainedOnce(stream).finally(() => draining.delete(stream));
    draining.set(stream, wait);
  }
  return wait;
}

async function drainedOnce(stream: Writable): Promise<void> {
  const done = new AbortController();
  // Each wait settles quietly: errors are reported by the stream's own 'error' listener.
  const waits = ['drain', 'error', 'close'].map((event) => once(stream, event, { signal: done.signal }).catch(() => undefined));
  await Promise.race(waits);
  done.abort();
}

/** The output could not be written: exit 1, in the words of src/fs/file-errors.ts. */
function outputError(where: string, error: unknown, then = 'nothing more was fetched'): SgqError {
  return fileError(error, { what: `cannot write to ${where}`, exitCode: ExitCode.internal, then });
}
