import { existsSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import type { Io } from '../../src/cli/start/io.js';
import { main } from '../../src/cli/start/main.js';

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env?: Record<string, string | undefined>;
  stdin?: string;
  stdoutIsTTY?: boolean;
  stderrIsTTY?: boolean;
  stdinIsTTY?: boolean;
  /** The terminal width stderr reports, as a TTY stream's `columns` does. */
  stderrColumns?: number;
  signal?: AbortSignal;
  now?: () => Date;
  /** Replaces stdin, e.g. with a stream that stays open like an idle pipe. */
  stdinStream?: Readable;
  /** Replaces stdout, e.g. with a stream that fails like a closed pipe. */
  stdout?: NodeJS.WritableStream & PassThrough;
  /** Sees the V8 flags the run asks for (the CLI's process sets them; a test only looks). */
  setV8Flags?: (flags: string) => Promise<void>;
}

/** A fresh, empty config folder, so no test reads the developer's own settings. */
export function tempDir(prefix = 'sgq-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Runs `main(argv, io)` in-process with captured streams. */
export async function runSgq(argv: string[], options: RunOptions = {}): Promise<RunResult> {
  const stdout = options.stdout ?? new PassThrough();
  const stderr = Object.assign(new PassThrough(), { columns: options.stderrColumns });
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  const io: Io = {
    stdout,
    stderr,
    stdin: options.stdinStream ?? Readable.from(options.stdin === undefined ? [] : [options.stdin]),
    env: { SGQ_CONFIG_DIR: tempDir(), ...options.env },
    stdoutIsTTY: options.stdoutIsTTY ?? false,
    stderrIsTTY: options.stderrIsTTY ?? false,
    stdinIsTTY: options.stdinIsTTY ?? false,
    signal: options.signal,
    now: options.now,
    setV8Flags: options.setV8Flags,
  };
  const code = await main(argv, io);
  await new Promise((r) => setImmediate(r));
  return { code, stdout: out, stderr: err };
}

export const lines = (text: string): string[] => text.split('\n').filter((l) => l !== '');
export const ndjson = (text: string): Record<string, unknown>[] => lines(text).map((l) => JSON.parse(l) as Record<string, unknown>);

/**
 * The folder of the one service whose snapshots a store holds (src/core/service.ts keys them
 * as STORE/@SERVICE/PROFILE/…): the tests' runs each talk to one service.
 */
export function serviceFolderIn(store: string): string {
  const found = readdirSync(store).filter((name) => name.startsWith('@'));
  if (found.length !== 1) throw new Error(`expected one service folder in ${store}, found ${JSON.stringify(found)}`);
  return join(store, found[0]!);
}

/** The --since-last marks a state file holds, of its one service (src/cli/run/since-marks.ts keeps each service's apart). */
export function marksIn(file: string): Record<string, string> {
  if (!existsSync(file)) return {};
  const { services } = JSON.parse(readFileSync(file, 'utf8')) as { services?: Record<string, Record<string, string>> };
  const all = Object.values(services ?? {});
  if (all.length > 1) throw new Error(`expected the marks of one service in ${file}, found ${Object.keys(services!).join(', ')}`);
  return all[0] ?? {};
}
