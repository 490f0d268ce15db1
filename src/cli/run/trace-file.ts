import { closeSync, fstatSync, openSync, writeSync } from 'node:fs';
import { PRIVATE_FILE, setMode } from '../../fs/modes.js';
import { exchangeHooks, type Exchange, type SgqHooks } from '../../core/hooks.js';
import { ExitCode } from '../../core/errors.js';
import { fileError, fileWarning } from '../../fs/file-errors.js';

/**
 * `--trace FILE`: every exchange as one NDJSON line, written as it happens (so a run that is
 * killed keeps the exchanges before), in a file only its owner can read. The client has
 * masked the key in every exchange before it gets here.
 */
export class TraceFile {
  /** The first write that failed: the run goes on (the trace is a diagnostic), and says so at the end. */
  failure?: string;

  private constructor(
    readonly file: string,
    private readonly fd: number,
  ) {}

  static open(file: string): TraceFile {
    try {
      const fd = openSync(file, 'w', PRIVATE_FILE);
      try {
        // The mode given to open applies only to a file it creates: an existing one is narrowed
        // here. A device or a FIFO (--trace /dev/stderr) is not sgq's to change.
        if (fstatSync(fd).isFile()) setMode(fd, PRIVATE_FILE);
      } catch (error) {
        closeSync(fd);
        throw error;
      }
      return new TraceFile(file, fd);
    } catch (error) {
      throw fileError(error, { what: `cannot write --trace ${file}`, exitCode: ExitCode.usage, then: 'nothing was fetched' });
    }
  }

  /** The client's hooks that write each exchange here. */
  hooks(): SgqHooks {
    return exchangeHooks((exchange) => this.write(exchange));
  }

  write(exchange: Exchange): void {
    if (this.failure) return;
    try {
      writeSync(this.fd, `${JSON.stringify(exchange)}\n`);
    } catch (error) {
      this.failure = fileWarning(error, `the --trace ${this.file} is incomplete`);
    }
  }

  close(): void {
    closeSync(this.fd);
  }
}
