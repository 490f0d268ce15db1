import type { Readable, Writable } from 'node:stream';
import { stderrIsTTY } from './stderr-on-use.js';

/**
 * Everything sgq touches outside itself. `bin/sgq.cjs` passes the real process; tests pass
 * captured streams, a fake env and their own signal, and run `main(argv, io)` in-process.
 */
export interface Io {
  stdout: Writable;
  stderr: Writable;
  stdin: Readable;
  env: Record<string, string | undefined>;
  stdoutIsTTY: boolean;
  stderrIsTTY: boolean;
  stdinIsTTY: boolean;
  /** Aborted on SIGINT/SIGTERM; `reason` is the signal name. */
  signal?: AbortSignal;
  /** Whether stdout may go through a pager: the real process's, not a test's captured stream. */
  canPage?: boolean;
  /** The clock used for relative `--since` values. */
  now?: () => Date;
  /**
   * Changes V8's flags for the rest of the run: only the real process has this (a test's Io
   * must not change the flags of the test runner, nor a library those of its program).
   */
  setV8Flags?: (flags: string) => Promise<void>;
  /** The process ends when the run does (the real process only): what its exit closes need not be closed first. */
  exitsAfterRun?: boolean;
}

export function processIo(signal?: AbortSignal): Io {
  const flagsSet = new Set<string>();
  // Creating stdin is not free and most runs never read it, so it and its TTY check stay
  // lazy (node:tty would load the whole net stack just to ask isatty). stderr is made when
  // something is written to it (src/cli/start/stderr-on-use.ts): a quiet run never makes it.
  return {
    stdout: process.stdout,
    get stderr() {
      return process.stderr;
    },
    get stdin() {
      return process.stdin;
    },
    env: process.env,
    stdoutIsTTY: process.stdout.isTTY === true,
    get stderrIsTTY() {
      return stderrIsTTY();
    },
    get stdinIsTTY() {
      return process.stdin.isTTY === true;
    },
    signal,
    canPage: true,
    exitsAfterRun: true,
    async setV8Flags(flags) {
      if (flagsSet.has(flags)) return;
      flagsSet.add(flags);
      // Loaded here, by the few runs that need it: node:v8 costs a start some 3 ms.
      const { setFlagsFromString } = await import('node:v8');
      setFlagsFromString(flags);
    },
  };
}

/**
 * Colour for stderr (or stdout's table), decided in one place: NO_COLOR wins, FORCE_COLOR
 * forces, otherwise only a terminal gets it. Returns a chalk level (0 = none).
 */
export function colorLevel(io: Io, stream: 'stderr' | 'stdout' = 'stderr'): 0 | 1 | 2 | 3 {
  const { NO_COLOR, FORCE_COLOR } = io.env;
  if (NO_COLOR !== undefined && NO_COLOR !== '') return 0;
  if (FORCE_COLOR !== undefined) {
    if (FORCE_COLOR === '0' || FORCE_COLOR === 'false') return 0;
    const level = Number(FORCE_COLOR);
    return level >= 1 && level <= 3 ? (level as 1 | 2 | 3) : 1;
  }
  const isTTY = stream === 'stderr' ? io.stderrIsTTY : io.stdoutIsTTY;
  return isTTY && io.env.TERM !== 'dumb' ? 1 : 0;
}
