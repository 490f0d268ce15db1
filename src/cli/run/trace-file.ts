import { closeSync, openSync, writeSync } from 'node:fs';
import type { Exchange } from '../../core/client.js';
import { usageError } from '../../core/errors.js';

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
      return new TraceFile(file, openSync(file, 'w', 0o600));
    } catch (error) {
      throw usageError(`cannot write --trace ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, 'give a file in a folder you can write');
    }
  }

  write(exchange: Exchange): void {
    if (this.failure) return;
    try {
      writeSync(this.fd, `${JSON.stringify(exchange)}\n`);
    } catch (error) {
      this.failure = `the --trace ${this.file} is incomplete: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`;
    }
  }

  close(): void {
    closeSync(this.fd);
  }
}
