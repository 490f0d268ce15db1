import { createWriteStream, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Writable } from 'node:stream';
import { once } from 'node:events';

/**
 * Where the data goes: stdout, or a file that appears only when the run succeeds.
 * Writes are whole pages, so lines of different users never interleave.
 */
export interface Sink {
  write(text: string): void;
  /** Resolves when the destination has taken what was written (backpressure). */
  drain(): Promise<void>;
  /** The consumer went away (a closed pipe): stop fetching. */
  readonly closed: boolean;
  /** Finishes the output; `ok` says whether the run succeeded. Returns a note for stderr, if any. */
  finish(ok: boolean): Promise<string | undefined>;
}

/** stdout; a reader that exits (`| head`) makes `closed` true and calls `onClose`. */
export class StreamSink implements Sink {
  closed = false;

  constructor(
    private readonly stream: Writable,
    onClose: () => void,
  ) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (this.closed) return;
      this.closed = true;
      // EPIPE is the normal end of `sgq … | head`; any other write error ends the run too.
      onClose();
      if (error.code !== 'EPIPE') this.failure = error;
    });
  }

  failure?: Error;

  write(text: string): void {
    if (!this.closed) this.stream.write(text);
  }

  async drain(): Promise<void> {
    if (this.closed || !this.stream.writableNeedDrain) return;
    await Promise.race([once(this.stream, 'drain'), once(this.stream, 'error'), once(this.stream, 'close')]).catch(() => undefined);
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
export class FileSink implements Sink {
  readonly closed = false;
  private readonly temp: string;
  private readonly stream: Writable;
  private error?: Error;

  constructor(private readonly file: string) {
    this.temp = join(dirname(file), `.${basename(file)}.${process.pid}.tmp`);
    this.stream = createWriteStream(this.temp, { flags: 'wx', mode: 0o644 });
    this.stream.on('error', (error) => {
      this.error = error;
    });
  }

  write(text: string): void {
    this.stream.write(text);
  }

  async drain(): Promise<void> {
    if (this.error) throw this.error;
    if (this.stream.writableNeedDrain) await once(this.stream, 'drain');
  }

  async finish(ok: boolean): Promise<string | undefined> {
    this.stream.end();
    await once(this.stream, 'close').catch(() => undefined);
    if (this.error) {
      rmSync(this.temp, { force: true });
      throw this.error;
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
