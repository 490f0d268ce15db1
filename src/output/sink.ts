import { createWriteStream, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Writable } from 'node:stream';
import { once } from 'node:events';
import { ExitCode, SgqError } from '../errors.js';

/**
 * Where the data goes: stdout, or a file that appears only when the run succeeds.
 * Writes are whole pages, so lines of different users never interleave.
 */
export interface Sink {
  write(text: string): void;
  /** Resolves when the destination has taken what was written (backpressure). */
  drain(): Promise<void>;
  /** The destination is gone (a closed pipe) or broken: stop fetching. */
  readonly closed: boolean;
  /** Set when the data could not be written (a full disk): the run must fail, not end quietly. */
  readonly failure?: SgqError;
  /** Finishes the output; `ok` says whether the run succeeded. Returns a note for stderr, if any. */
  finish(ok: boolean): Promise<string | undefined>;
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
    where: string,
    onClose: () => void,
    endCode?: string,
  ) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (this.closed) return;
      this.closed = true;
      if (endCode === undefined || error.code !== endCode) this.failure = outputError(where, error);
      onClose();
    });
  }

  write(text: string): void {
    if (!this.closed) this.stream.write(text);
  }

  async drain(): Promise<void> {
    if (!this.closed && this.stream.writableNeedDrain) await drained(this.stream);
  }

  abstract finish(ok: boolean): Promise<string | undefined>;
}

/** stdout; a reader that exits (`| head`) makes `closed` true and calls `onClose`. */
export class StreamSink extends StreamBackedSink {
  constructor(stream: Writable, onClose: () => void) {
    // EPIPE is the normal end of `sgq … | head`.
    super(stream, 'stdout', onClose, 'EPIPE');
  }

  async finish(): Promise<string | undefined> {
    return undefined;
  }
}

/**
 * `--out FILE`: writes to a temporary file beside FILE and renames it into place on success,
 * so FILE is never half-written. On failure FILE keeps its old contents and what was fetched
 * is kept as FILE.partial, since it was paid for.
 */
export class FileSink extends StreamBackedSink {
  private readonly temp: string;

  constructor(
    private readonly file: string,
    onClose: () => void,
  ) {
    const temp = join(dirname(file), `.${basename(file)}.${process.pid}.tmp`);
    super(createWriteStream(temp, { flags: 'wx', mode: 0o644 }), file, onClose);
    this.temp = temp;
  }

  async finish(ok: boolean): Promise<string | undefined> {
    this.stream.end();
    await once(this.stream, 'close').catch(() => undefined);
    if (this.failure) {
      // A file cut short by a write error is no use to anyone; FILE itself was never touched.
      rmSync(this.temp, { force: true });
      return undefined;
    }
    if (ok) {
      renameSync(this.temp, this.file);
      return undefined;
    }
    const partial = `${this.file}.partial`;
    renameSync(this.temp, partial);
    return `${this.file} left unchanged; the records fetched before the failure are in ${partial}`;
  }
}

/** Waits for 'drain', or for the stream to fail or close; removes every listener it added. */
async function drained(stream: Writable): Promise<void> {
  const done = new AbortController();
  // Each wait settles quietly: errors are reported by the stream's own 'error' listener.
  const waits = ['drain', 'error', 'close'].map((event) => once(stream, event, { signal: done.signal }).catch(() => undefined));
  await Promise.race(waits);
  done.abort();
}

function outputError(where: string, error: NodeJS.ErrnoException): SgqError {
  return new SgqError(ExitCode.internal, `cannot write to ${where}: ${error.code ?? error.message}`, 'check free space and permissions; nothing more was fetched');
}
