import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { ExitCode, SgqError, firstLine, type ExitCodeValue } from '../core/errors.js';

// The one classification of file-system errors. Every writer (--out and stdout, the marks,
// snapshots, the dataset, the config file, the cache, the balance note, the lists of users
// left, locks) says a failure in one line built here: what failed and where (the writer's
// words), why (the error's code in words), and what to do about it. The exit code is the
// writer's, as docs/exit-codes.md gives it; the cache and the balance note only warn.
// None of these is a bug in sgq: a full disk, a quota, a read-only mount, permissions or a
// limit of open files are the machine's state, and the line says how to change it.

/** An error of the file system, as Node throws them (`code`, and often `path` and `syscall`). */
export interface SystemError {
  code?: string;
  message?: string;
  path?: string;
  syscall?: string;
}

/** A failure of a writer, in words: the cause (with its code) and what to do. */
export interface Classified {
  /** `the disk is full (ENOSPC)` */
  cause: string;
  /** `free some space on it`; none for an error that is not the file system's. */
  fix?: string;
}

/** A file-system failure of a writer, as an SgqError: a run's jobs tell it from the service's failures. */
export class FileError extends SgqError {
  constructor(
    exitCode: ExitCodeValue,
    message: string,
    hint: string | undefined,
    /** The errno code (`ENOSPC`), or undefined for an error that is not the file system's. */
    readonly code: string | undefined,
  ) {
    super(exitCode, message, hint);
  }
}

/** What a writer says of its failure. */
export interface Writer {
  /** What failed, with where: `cannot store the snapshot of jack in /data/snapshots`. */
  what: string;
  /** The exit code the docs give for this writer. */
  exitCode: ExitCodeValue;
  /** What the failure left, said after what to do: `nothing more was fetched`. */
  then?: string;
}

/** Whether `error` is one of the file system's (or the system's): an errno code such as ENOSPC. */
export const isSystemError = (error: unknown): error is SystemError & Error =>
  error instanceof Error && typeof (error as SystemError).code === 'string' && /^E[A-Z0-9]+$/.test((error as SystemError).code!);

/** The one line of a writer's failure: `WHAT: CAUSE; FIX; THEN`, with the writer's exit code. */
export function fileError(error: unknown, writer: Writer): FileError {
  if (error instanceof FileError) return error;
  const { cause, fix } = classify(error);
  const hint = [fix, writer.then].filter(Boolean).join('; ') || undefined;
  return new FileError(writer.exitCode, `${writer.what}: ${cause}`, hint, codeOf(error));
}

/** The line a writer that only warns (the cache, the balance note) prints: `WHAT: CAUSE; FIX; THEN`. */
export function fileWarning(error: unknown, what: string, then?: string): string {
  const { cause, fix } = classify(error);
  return [`${what}: ${cause}`, fix, then].filter(Boolean).join('; ');
}

/**
 * A file-system error that reached the top with no writer's words (a command's own reads and
 * writes: `dataset compact`, `snapshots prune`): what the system call was and on what, exit 1.
 * Undefined for anything else (a socket's error, a bug), which keeps its own words.
 */
export function unplacedFileError(error: unknown): FileError | undefined {
  if (error instanceof SgqError || !isSystemError(error) || (error.path === undefined && !(error.code! in CODES))) return undefined;
  const verb = VERBS[error.syscall ?? ''] ?? `cannot ${error.syscall ?? 'use'}`;
  return fileError(error, { what: `${verb} ${error.path ?? 'a file'}`, exitCode: ExitCode.internal });
}

const VERBS: Record<string, string> = {
  open: 'cannot open', read: 'cannot read', write: 'cannot write to', rename: 'cannot rename', mkdir: 'cannot create the folder',
  unlink: 'cannot remove', rm: 'cannot remove', rmdir: 'cannot remove', scandir: 'cannot list', fsync: 'cannot flush', close: 'cannot close',
  link: 'cannot link', symlink: 'cannot link', copyfile: 'cannot copy', chmod: 'cannot change the mode of', fchmod: 'cannot change the mode of',
  stat: 'cannot look at', lstat: 'cannot look at', access: 'cannot reach', utime: 'cannot touch',
};

const codeOf = (error: unknown): string | undefined => (isSystemError(error) ? error.code : (error as SystemError | undefined)?.code);

/** An error in words: why it failed, and what to do. */
export function classify(error: unknown): Classified {
  const code = codeOf(error);
  const path = (error as SystemError | undefined)?.path;
  const message = firstLine(error instanceof Error ? error.message : String((error as SystemError | undefined)?.message ?? error));
  const words = code === undefined ? undefined : CODES[code]?.(path, message);
  if (words) return words;
  if (code === undefined || !/^E[A-Z0-9]+$/.test(code)) return { cause: message };
  return { cause: `${plainMessage(message, code, path)} (${code})`, fix: 'check the path and try again' };
}

/** Node's `ENOSPC: no space left on device, write` without its code and path: `no space left on device, write`. */
function plainMessage(message: string, code: string, path: string | undefined): string {
  let text = message.startsWith(`${code}: `) ? message.slice(code.length + 2) : message;
  if (path) text = text.replace(` '${path}'`, '');
  return text;
}

/** The folder to look at: the file's own, when the error names a file. */
const folderOf = (path: string | undefined): string => (path ? dirname(path) : 'its folder');

const CODES: Record<string, (path: string | undefined, message: string) => Classified> = {
  ENOSPC: () => ({ cause: 'the disk is full (ENOSPC)', fix: 'free some space on it' }),
  EDQUOT: () => ({ cause: 'your disk quota there is used up (EDQUOT)', fix: 'free some of your space on that disk, or ask for a larger quota' }),
  EROFS: () => ({ cause: 'the file system is read-only (EROFS)', fix: 'mount it read-write, or choose a folder on another disk' }),
  EACCES: (path) => ({ cause: 'permission denied (EACCES)', fix: `check who may write to ${folderOf(path)} (ls -ld), or run sgq as its owner` }),
  EPERM: (path) => ({ cause: 'operation not permitted (EPERM)', fix: `check who may write to ${folderOf(path)} (ls -ld; lsattr for an immutable file), or run sgq as its owner` }),
  EMFILE: () => tooManyFiles(),
  ENFILE: () => ({
    cause: "the system's table of open files is full (ENFILE)",
    fix: 'close programs that hold many files, raise the system\'s limit (sysctl fs.file-max), or lower --concurrency',
  }),
  EIO: () => ({ cause: 'an input/output error: the disk or the network file system failed (EIO)', fix: 'check the disk (dmesg) and try again' }),
  ENOENT: (path) => ({ cause: 'no such file or folder (ENOENT)', fix: `check that ${folderOf(path)} exists (something may have removed it during the run)` }),
  ENOTDIR: (path) => ({ cause: 'a part of its path is not a folder (ENOTDIR)', fix: `check the path${path ? ` ${path}` : ''}` }),
  EISDIR: () => ({ cause: 'it is a folder (EISDIR)', fix: 'name a file' }),
  EEXIST: (path) => ({ cause: 'a file stands where a folder or a new file must go (EEXIST)', fix: `check the path${path ? ` ${path}` : ''}` }),
  // sgq's own code (src/fs/read.ts): its message says what the file is instead.
  ENOTREG: (path, message) => ({ cause: message, fix: `move ${path ?? 'it'} away: sgq keeps a regular file there` }),
  ENAMETOOLONG: () => ({ cause: 'its name is too long for the file system (ENAMETOOLONG)', fix: 'choose a shorter path' }),
  ELOOP: () => ({ cause: 'too many symbolic links on its path (ELOOP)', fix: 'check the links on the path' }),
  EFBIG: () => ({ cause: 'the file is larger than the file system, or `ulimit -f`, allows (EFBIG)', fix: 'write to another file system, or raise ulimit -f' }),
  EPIPE: () => ({ cause: 'its reader closed it (EPIPE)', fix: 'keep the reader open until sgq ends' }),
  EBUSY: () => ({ cause: 'it is busy (EBUSY)', fix: 'try again once the program using it is done' }),
};

/**
 * EMFILE: the process met its limit of open files. The limit is read from /proc when that can
 * still be opened (readFileLimit ran earlier in runs that open many files, or reads it now).
 */
function tooManyFiles(): Classified {
  const limit = openFileLimit();
  if (!limit) return { cause: 'too many open files: sgq met its limit of open files (EMFILE)', fix: 'see it with `ulimit -n` and raise it in the shell that starts sgq (`ulimit -n 4096`), or lower --concurrency' };
  const cause = `too many open files: sgq met its limit of ${limit.soft} open files (EMFILE)`;
  const wanted = Math.max(4096, limit.soft * 4);
  if (limit.hard !== undefined && limit.hard <= limit.soft) {
    return { cause, fix: `it is the hard limit too, which root raises (\`ulimit -n ${wanted}\` as root, or the system's limits.conf); or lower --concurrency` };
  }
  const raised = Math.min(limit.hard ?? Infinity, wanted);
  return { cause, fix: `raise it in the shell that starts sgq (\`ulimit -n ${raised}\`${limit.hard === undefined ? '' : `; up to ${limit.hard} without root`}), or lower --concurrency` };
}

let known: { soft: number; hard?: number } | undefined;

/**
 * The limit of open files of this process (`ulimit -n`), read once from /proc/self/limits
 * (Linux). Runs that open many files read it at their start (about 0.1 ms): once the limit is
 * met, /proc may not open any more.
 */
export function openFileLimit(): { soft: number; hard?: number } | undefined {
  if (known || process.platform !== 'linux') return known;
  try {
    const line = readFileSync('/proc/self/limits', 'latin1').split('\n').find((l) => l.startsWith('Max open files'));
    const [soft, hard] = (line?.slice('Max open files'.length).trim().split(/\s+/) ?? []).map(Number);
    if (soft !== undefined && Number.isFinite(soft)) known = { soft, hard: hard !== undefined && Number.isFinite(hard) ? hard : undefined };
  } catch {
    // EMFILE itself, or no /proc: the line names `ulimit -n` instead.
  }
  return known;
}
