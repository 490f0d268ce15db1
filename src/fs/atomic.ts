import { closeSync, constants, fstatSync, fsync, fsyncSync, ftruncateSync, openSync, readSync, renameSync, write, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import { PRIVATE_FILE, setMode } from './modes.js';
import { NotRegularFileError, kindOf } from './read.js';
import { removeFile } from './remove.js';
import { tempPath } from './temp-names.js';

// The one place where sgq replaces a file: an exclusive temporary file beside the target
// (src/fs/temp-names.ts), written, flushed to disk, renamed over the target, and the folder
// flushed so the rename itself survives a power cut. A reader sees the old file or the new
// one, never half of one; a crash leaves the old file and a temporary file that the next run
// sweeps (src/fs/sweep.ts). No other module renames a file into place.
//
// Each descriptor has one owner, who closes it once: a number closed twice may by then be
// another job's file (descriptors are reused at once), so closeTemp forgets the number before
// it closes it, and writerTo streams into a descriptor without ever closing it.
//
// The one exception to replacing, at the end of this file: the calls ledger
// (src/cli/run/calls-ledger.ts) is written in place at every call, where a rename would cost
// ten times the call's own bookkeeping, with writes that a reader sees whole or not at all.

export interface ReplaceOptions {
  /** Flush the data and the folder to disk (default). Off for notes not worth two fsyncs. */
  durable?: boolean;
  /** The replaced file's mode: 0600 unless said otherwise. */
  mode?: number;
  /**
   * Asked just before the rename, the data written: false removes the temporary file and
   * leaves the target as it is (a compare-and-swap: the caller checks the target is still the
   * one it read). replaceFile then returns false.
   */
  proceed?: () => boolean;
  /** With `durable`, flush the folder after the rename (default); false where the caller flushes it once after several files. */
  flushFolder?: boolean;
}

/** Replaces `target` with `data` atomically (see above); throws, leaving no temporary file, when it cannot. */
export function replaceFile(target: string, data: string | Uint8Array, { durable = true, mode = PRIVATE_FILE, proceed, flushFolder = true }: ReplaceOptions = {}): boolean {
  const temp = createTemp(target, mode);
  try {
    try {
      writeAll(temp.fd, data);
      sealTemp(temp.fd, { mode, durable });
    } finally {
      closeSync(temp.fd);
    }
    if (proceed && !proceed()) {
      removeFile(temp.path);
      return false;
    }
    moveIntoPlace(temp.path, target, { durable: durable && flushFolder });
    return true;
  } catch (error) {
    removeFile(temp.path);
    throw error;
  }
}

/** Copies the file `from` to `target` as replaceFile writes one: a temporary file beside `target`, flushed, renamed over it. */
export function copyIntoPlace(from: string, target: string, mode: number = PRIVATE_FILE): void {
  const source = openSync(from, 'r');
  try {
    const temp = createTemp(target, mode);
    try {
      try {
        const chunk = Buffer.allocUnsafe(1 << 20);
        for (let n; (n = readSync(source, chunk, 0, chunk.length, null)) > 0; ) writeAll(temp.fd, chunk.subarray(0, n));
        sealTemp(temp.fd, { mode });
      } finally {
        closeSync(temp.fd);
      }
      moveIntoPlace(temp.path, target);
    } catch (error) {
      removeFile(temp.path);
      throw error;
    }
  } finally {
    closeSync(source);
  }
}

/** A temporary file of this run's own, open for writing (and reading back); `fd` is -1 once closed. */
export interface TempFile {
  path: string;
  fd: number;
}

/** Closes a temporary file's descriptor, once: the number is forgotten first, so no later close reaches a file opened since. */
export function closeTemp(temp: { fd: number }): void {
  const { fd } = temp;
  if (fd < 0) return;
  temp.fd = -1;
  closeSync(fd);
}

/** Gives up a temporary file that will not be renamed into place: its descriptor closed (once), the file removed, whatever the close says. */
export function discardTemp(temp: { path: string; fd: number }): void {
  try {
    closeTemp(temp);
  } finally {
    removeFile(temp.path);
  }
}

/** A stream into a descriptor it does not own (writerTo). */
export interface FdWriter extends Writable {
  /**
   * Resolves once no write to the descriptor is under way: a pipeline rejects as soon as one
   * of its streams fails, while the write it had handed this stream may still be running on
   * Node's thread pool. The owner awaits it before it closes the descriptor.
   */
  idle(): Promise<void>;
}

/**
 * A stream writing to `fd`, which it never closes, whatever happens to it: Node's file streams
 * close their descriptor when they are destroyed (a pipeline destroys its streams on an error),
 * whatever autoClose says, and the owner's own close would then land on a number another job
 * may have opened meanwhile. Its owner closes the descriptor once idle() has resolved. A short
 * write (a full disk taking part of it) is carried on until it fails.
 */
export function writerTo(fd: number): FdWriter {
  let inFlight: Promise<void> = Promise.resolve();
  const writing = (bytes: Buffer, done: (error?: Error | null) => void) => {
    inFlight = new Promise((settled) =>
      writeFully(fd, bytes, (error) => {
        settled();
        done(error);
      }),
    );
  };
  const stream = new Writable({
    write: (chunk: Buffer, _encoding, done) => writing(chunk, done),
    writev: (chunks, done) => writing(Buffer.concat(chunks.map(({ chunk }) => chunk as Buffer)), done),
    destroy: (error, done) => void inFlight.then(() => done(error)),
  });
  // Once it has ended or been destroyed no write starts, so the last one is the one to wait for.
  return Object.assign(stream, { idle: () => inFlight });
}

function writeFully(fd: number, bytes: Buffer, done: (error?: Error | null) => void, at = 0): void {
  if (at >= bytes.length) return done();
  write(fd, bytes, at, bytes.length - at, null, (error, written) => (error ? done(error) : writeFully(fd, bytes, done, at + written)));
}

/**
 * Creates the temporary file that will replace `target`, exclusively (never one a killed run
 * left) and no more readable than `mode`: the streaming half of replaceFile, for output
 * written as it arrives. Finish with sealTemp, closeTemp and moveIntoPlace.
 */
export function createTemp(target: string, mode: number = PRIVATE_FILE): TempFile {
  const path = tempPath(target);
  return { path, fd: openSync(path, 'wx+', mode) };
}

/** Gives the temporary file its final mode (the umask may have narrowed it) and, when `durable`, flushes it to disk. */
export function sealTemp(fd: number, { mode, durable = true }: { mode?: number; durable?: boolean }): void {
  if (mode !== undefined) setMode(fd, mode);
  if (durable) fsyncSync(fd);
}

// The same steps with each flush on libuv's threads, for a caller that keeps the event loop
// busy meanwhile (a run's requests): a flush takes milliseconds, and a snapshot run of
// thousands of users flushed three files per user with the loop stopped.

/** sealTemp, flushing without stopping the event loop. */
export async function sealTempAsync(fd: number, { mode }: { mode?: number } = {}): Promise<void> {
  if (mode !== undefined) setMode(fd, mode);
  await fsyncAsync(fd);
}

/** replaceFile (durable), flushing the file and the folder without stopping the event loop. */
export async function replaceFileAsync(target: string, data: string | Uint8Array, { mode = PRIVATE_FILE }: { mode?: number } = {}): Promise<void> {
  const temp = createTemp(target, mode);
  try {
    try {
      writeAll(temp.fd, data);
      await sealTempAsync(temp.fd, { mode });
    } finally {
      closeSync(temp.fd);
    }
    renameSync(temp.path, target);
    await syncFolderAsync(dirname(target));
  } catch (error) {
    removeFile(temp.path);
    throw error;
  }
}

/** syncFolder without stopping the event loop; best effort as well. */
async function syncFolderAsync(folder: string): Promise<void> {
  let fd: number;
  try {
    fd = openSync(folder, 'r');
  } catch {
    return;
  }
  try {
    await fsyncAsync(fd);
  } catch {
    // as syncFolder: the rename itself is still atomic
  } finally {
    closeSync(fd);
  }
}

const fsyncAsync = promisify(fsync);

/** Renames a closed, sealed temporary file to `target`; when `durable`, the folder is flushed too. */
export function moveIntoPlace(temp: string, target: string, { durable = true }: { durable?: boolean } = {}): void {
  renameSync(temp, target);
  if (durable) syncFolder(dirname(target));
}

/**
 * Moves a whole folder to `target` (which must not exist): one rename, so another run sees it
 * at the old place or the new one, never half moved; both parents are flushed. Throws as
 * rename does (ENOENT: another run moved it first; ENOTEMPTY or EEXIST: the target is there).
 */
export function moveFolder(folder: string, target: string): void {
  renameSync(folder, target);
  syncFolder(dirname(target));
  syncFolder(dirname(folder));
}

/** Makes a rename durable: the folder's entry must reach the disk too. Best effort (not every system allows it). */
export function syncFolder(folder: string): void {
  try {
    const fd = openSync(folder, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // e.g. EISDIR or EPERM on some systems: the rename itself is still atomic.
  }
}

/** Writes every byte of `data` at the fd's position, or throws: a short write (a full disk taking part of it) is carried on until it fails. */
export function writeAll(fd: number, data: string | Uint8Array): void {
  const bytes = typeof data === 'string' ? Buffer.from(data) : data;
  for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, bytes.length - at);
}

/** Opens `file` to append records (created 0600 when missing); readers count on its size only. */
export function openForAppend(file: string): number {
  return openRegular(file, constants.O_APPEND);
}

/**
 * Appends `data` in one write(2). The file was opened to append (O_APPEND): the kernel places
 * each write whole at the end, so writers of several processes never interleave their bytes.
 */
export function appendRecord(fd: number, data: Uint8Array): void {
  if (writeSync(fd, data) !== data.length) throw new Error(`short append (${data.length} bytes)`);
}

/** Empties a file of appended records in place, for its size to start again (a reader sees it shrink). */
export function emptyRecords(fd: number): void {
  ftruncateSync(fd, 0);
}

/** Opens, creating or emptying it (0600), a file only this process writes, one byte at its start (writeFlag). */
export function openFlag(file: string): number {
  return openRegular(file, constants.O_TRUNC);
}

/**
 * Opens a file written in place, for writing, created 0600 when missing: without waiting for a
 * reader when a FIFO is in its place (O_NONBLOCK), and refused unless it is a regular file.
 */
function openRegular(file: string, flags: number): number {
  const fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | flags | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0), PRIVATE_FILE);
  const stat = fstatSync(fd);
  if (stat.isFile()) return fd;
  closeSync(fd);
  throw new NotRegularFileError(kindOf(stat));
}

/** Writes one byte at the start of a flag file: a reader sees the old byte or the new one. */
export function writeFlag(fd: number, flag: Uint8Array): void {
  writeSync(fd, flag, 0, 1, 0);
}
