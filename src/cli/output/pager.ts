import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import type { Writable } from 'node:stream';
import type { Io } from '../start/io.js';
import { StreamSink, type Sink } from './sink.js';

/**
 * The pager command, as gh chooses it: SGQ_PAGER, then PAGER, then `less -FRX` (which
 * quits by itself when the output fits one screen). Empty or `cat` means none.
 */
export function pagerCommand(env: Io['env']): string[] | undefined {
  const command = (env.SGQ_PAGER ?? env.PAGER ?? 'less -FRX').trim();
  const words = command.split(/\s+/);
  return command === '' || words[0] === 'cat' ? undefined : words;
}

/** Whether `program` can be run: a path to an executable, or a name found on PATH. */
function runnable(program: string, env: Io['env']): boolean {
  const candidates = isAbsolute(program) || program.includes('/') ? [program] : (env.PATH ?? '').split(delimiter).filter(Boolean).map((dir) => join(dir, program));
  return candidates.some((file) => {
    try {
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/**
 * stdout through a pager. The pager starts with the first write, so that a run that prints
 * nothing (or fails first) never opens one; quitting it early is the normal end of a pipe.
 */
class PagerSink implements Sink {
  private child?: ChildProcess;
  private inner?: StreamSink;
  private stopped = false;
  /** The run has ended its output: the pager exiting now is the normal end. */
  private finishing = false;

  constructor(
    private readonly command: string[],
    private readonly env: Io['env'],
    private readonly onClose: () => void,
    private readonly onStart: () => void,
    /** The pager process ended (quit, or the output done): the terminal is sgq's again. */
    private readonly onEnd: () => void,
  ) {}

  get closed(): boolean {
    return this.stopped || (this.inner?.closed ?? false);
  }

  get failure() {
    return this.inner?.failure;
  }

  /** Records reach the reader as they are written, as on stdout. */
  readonly streams = true;

  get flushed(): boolean {
    return this.inner?.flushed ?? true;
  }

  get delivered(): boolean {
    return this.inner?.delivered ?? true;
  }

  write(chunk: string | Uint8Array): void {
    if (!this.inner) {
      this.onStart();
      // gh sets these for less and lv when the user has not: raw colour, quit on one screen, keep the screen.
      const env = { ...this.env, LESS: this.env.LESS ?? 'FRX', LV: this.env.LV ?? '-c' };
      // node:child_process is loaded only when a pager starts, never by a run into a pipe.
      const { spawn } = process.getBuiltinModule('node:child_process');
      this.child = spawn(this.command[0]!, this.command.slice(1), { stdio: ['pipe', 'inherit', 'inherit'], env });
      this.child.on('error', () => {
        this.stop();
        this.onEnd();
      });
      this.child.on('close', () => this.onEnd());
      // Quitting the pager ends the run at once, even while a page is being fetched: nothing more is bought.
      this.child.on('exit', () => this.finishing || this.stop());
      this.inner = new StreamSink(this.child.stdin as Writable, this.onClose);
    }
    this.inner.write(chunk);
  }

  private stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.onClose();
  }

  async drain(): Promise<void> {
    await this.inner?.drain();
  }

  async finish(): Promise<string | undefined> {
    this.finishing = true;
    if (!this.child) return undefined;
    this.child.stdin?.end();
    if (this.child.exitCode === null && this.child.signalCode === null) await once(this.child, 'close').catch(() => undefined);
    return undefined;
  }
}

/**
 * A pager for stdout when a person reads it: stdout is a terminal, the process may start
 * one (`io.canPage`), `--no-pager` was not given and the pager can be found. Else undefined.
 */
export function pagerSink(io: Io, wanted: boolean, onClose: () => void, onStart: () => void, onEnd: () => void = () => undefined): Sink | undefined {
  if (!wanted || !io.stdoutIsTTY || !io.canPage) return undefined;
  const command = pagerCommand(io.env);
  if (!command || !runnable(command[0]!, io.env)) return undefined;
  return new PagerSink(command, io.env, onClose, onStart, onEnd);
}
