import { fstatSync } from 'node:fs';

// process.stderr is made by Node the first time it is read; for a pipe that is a socket,
// about 0.5 ms of a one-page run that has nothing to say (the bench's `-q`). So sgq does not
// read it until it writes to it: the handler every stream of sgq's needs is attached then.

/** Runs `attach` on process.stderr as it is first read (at once where Node defines it otherwise than lazily). */
export function onStderrCreated(attach: (stream: NodeJS.WriteStream) => void): void {
  const lazy = Object.getOwnPropertyDescriptor(process, 'stderr');
  if (lazy?.get === undefined || lazy.configurable !== true) {
    attach(process.stderr);
    return;
  }
  Object.defineProperty(process, 'stderr', {
    configurable: true,
    enumerable: lazy.enumerable,
    get() {
      // Node's own getter again (it keeps the stream it made), before anything can read it twice.
      Object.defineProperty(process, 'stderr', lazy);
      const stream = lazy.get!.call(process) as NodeJS.WriteStream;
      attach(stream);
      return stream;
    },
  });
}

let stderrTTY: boolean | undefined;
/**
 * Whether stderr is a terminal, without making process.stderr: node:tty's isatty, which Node
 * asks when it makes it. Only a character device can be one, so a pipe or a file is told by
 * fstat alone and never loads node:tty (which loads node:net).
 */
export function stderrIsTTY(): boolean {
  stderrTTY ??= characterDevice(2) && process.getBuiltinModule('node:tty').isatty(2);
  return stderrTTY;
}

function characterDevice(fd: number): boolean {
  try {
    return fstatSync(fd).isCharacterDevice();
  } catch {
    return false; // closed
  }
}
