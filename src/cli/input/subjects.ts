import { interruptedBy, usageError } from '../../core/errors.js';
import { SeenNames } from './seen-names.js';
import type { Io } from '../start/io.js';
import { chunksUntilStopped } from './stdin-chunks.js';

/**
 * The users (or list ids) of a command: its arguments, where `-` stands for stdin, one per
 * line, skipping blank lines and `#` comments. Each is asked once, in first-seen order.
 *
 * A list is read as the run needs it, not up front, so a million users on stdin cost the
 * memory of the names seen so far (for the duplicates: about 35 MiB a million, see SeenNames),
 * never of jobs or records.
 */
export class Subjects implements AsyncIterable<string> {
  private constructor(
    /** The first few, read ahead so a run knows early whether there are none, one or several. */
    readonly first: readonly string[],
    private readonly rest: AsyncIterator<string>,
    /** Some came from stdin (`-`): a list of any length, so each record is tagged with its user. */
    readonly fromStdin: boolean,
    private readonly cut: { short: boolean } = { short: false },
    /** How many there are, when known before the run (arguments, not a list on stdin): the progress bar's bound. */
    readonly count?: number,
  ) {}

  /**
   * A stop (SIGINT, SIGTERM) ended the reading of stdin while it was waiting for more: users
   * after the last one read were never seen, and a resume list cannot name them.
   */
  get cutShort(): boolean {
    return this.cut.short;
  }

  /** Reads ahead up to `ahead` subjects; a usage error if there are none. */
  static async open(args: readonly string[], io: Pick<Io, 'stdin' | 'stdinIsTTY' | 'signal'>, ahead: number): Promise<Subjects> {
    const fromStdin = args.includes('-');
    // io.stdin is touched only for `-`: creating process.stdin costs a start some 3 ms.
    if (fromStdin && io.stdinIsTTY) throw usageError('- reads users from stdin, but stdin is a terminal', 'pipe a file in: sgq … - < users.txt');
    if (args.some((a) => a.trim() === '')) throw usageError('an empty user name was given');
    const cut = { short: false };
    const all = unique(args, io, () => (cut.short = true));
    const first: string[] = [];
    while (first.length < ahead) {
      const next = await all.next();
      if (next.done) break;
      first.push(next.value);
    }
    if (first.length === 0 && cut.short) throw interruptedBy(io.signal?.reason);
    if (first.length === 0) throw usageError('no users given: stdin held none');
    return new Subjects(first, all, fromStdin, cut, fromStdin ? undefined : new Set(args.map((a) => a.trim())).size);
  }

  /** The subjects in order: those read ahead, then the rest as they are read. */
  [Symbol.asyncIterator](): AsyncIterator<string> {
    // A plain iterator over the generator, not another generator: each layer of async
    // generators costs every one of a million users some microtasks.
    let i = 0;
    return {
      next: () => (i < this.first.length ? Promise.resolve({ value: this.first[i++]!, done: false }) : this.rest.next()),
      return: async () => (await this.rest.return?.(), { value: undefined, done: true }),
    };
  }

  /** Each subject made into something (a job) as it is taken. */
  map<T>(fn: (subject: string) => T): AsyncIterable<T> {
    return {
      [Symbol.asyncIterator]: () => {
        const subjects = this[Symbol.asyncIterator]();
        return {
          next: async () => {
            const next = await subjects.next();
            return next.done ? next : { value: fn(next.value), done: false };
          },
          return: async () => (await subjects.return?.(), { value: undefined, done: true }),
        };
      },
    };
  }
}

/**
 * The subjects of the arguments, `-` read a line at a time as the stream delivers them, each
 * once: one generator for all of it (see above).
 */
async function* unique(args: readonly string[], io: Pick<Io, 'stdin' | 'signal'>, cut: () => void): AsyncGenerator<string> {
  const seen = new SeenNames();
  for (const arg of args) {
    if (arg !== '-') {
      if (seen.add(arg.trim())) yield arg.trim();
      continue;
    }
    const stdin = io.stdin;
    let partial = '';
    stdin.setEncoding('utf8');
    for await (const chunk of chunksUntilStopped(stdin, io.signal, cut) as AsyncIterable<string>) {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop()!;
      for (const line of lines) {
        const user = subjectOf(line);
        if (user && seen.add(user)) yield user;
      }
    }
    const user = subjectOf(partial);
    if (user && seen.add(user)) yield user;
  }
}

/** A line's user: without a `#` comment and surrounding blanks (a CR included). */
const subjectOf = (line: string): string => {
  const hash = line.indexOf('#');
  return (hash === -1 ? line : line.slice(0, hash)).trim();
};
