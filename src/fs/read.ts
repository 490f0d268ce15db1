import { closeSync, constants, fstatSync, openSync, readdirSync, readFileSync, readSync, type Stats } from 'node:fs';

// Reads of sgq's own state and config files. A plain readFileSync of a FIFO blocks until a
// writer opens it, in a synchronous call no signal can interrupt: the run hangs before any
// request and ignores SIGTERM. So these files are opened without blocking (O_NONBLOCK makes
// opening a FIFO return at once), checked to be a regular file, and only then read.

/** The error a read of something that is not a regular file throws; `code` is 'ENOTREG'. */
export class NotRegularFileError extends Error {
  readonly code = 'ENOTREG';
  constructor(readonly kind: string) {
    super(`it is ${kind}, not a regular file`);
  }
}

/** Reads a regular file whole; refuses a FIFO, a device, a socket or a folder without waiting on it. */
export function readRegularFile(path: string): Buffer;
export function readRegularFile(path: string, encoding: BufferEncoding): string;
export function readRegularFile(path: string, encoding?: BufferEncoding): Buffer | string {
  return withRegularFile(path, (fd) => (encoding === undefined ? readFileSync(fd) : readFileSync(fd, encoding)));
}

/**
 * readRegularFile into `spare` when the file fits in it (the bytes read, a view of it), else
 * into a new buffer: memory a process has touched already costs less than new memory.
 */
export function readRegularFileInto(path: string, spare: Buffer): Buffer {
  return withRegularFile(path, (fd, size) => {
    if (size > spare.length) return readFileSync(fd);
    return spare.subarray(0, readUpTo(fd, spare, 0, spare.length));
  });
}

/** Reads `fd` into `buffer` from offset `at` until `end` or the file's end; the offset reached. */
export function readUpTo(fd: number, buffer: Uint8Array, at: number, end: number): number {
  for (let read = -1; read !== 0 && at < end; at += read) read = readSync(fd, buffer, at, end - at, null);
  return at;
}

/** `read` of the open file at `path` (and its size) if it is a regular file; NotRegularFileError if not. */
function withRegularFile<T>(path: string, read: (fd: number, size: number) => T): T {
  // O_NONBLOCK is undefined on Windows, where opening a named pipe does not wait for a writer.
  const fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0));
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new NotRegularFileError(kindOf(stat));
    return read(fd, stat.size);
  } finally {
    closeSync(fd);
  }
}

/** What a file that is not a regular one is, in words. */
export function kindOf(stat: Stats): string {
  if (stat.isFIFO()) return 'a FIFO';
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return 'a device';
  if (stat.isSocket()) return 'a socket';
  if (stat.isDirectory()) return 'a folder';
  return 'a special file';
}

/** The names in `folder`; none when it is gone or cannot be read. */
export function listing(folder: string): string[] {
  try {
    return readdirSync(folder);
  } catch {
    return [];
  }
}
