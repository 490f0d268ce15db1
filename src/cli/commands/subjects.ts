import type { Readable } from 'node:stream';
import { usageError } from '../../core/errors.js';
import { SeenNames } from './seen-names.js';
import type { Io } from '../io.js';

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
  ) {}

  /** Reads ahead up to `ahead` subjects; a usage error if there are none. */
  static async open(args: readonly string[], io: Pick<Io, 'stdin' | 'stdinIsTTY'>, ahead: number): Promise<Subjects> {
    const fromStdin = args.includes('-');
    // io.stdin is touched only for `-`: creating process.stdin costs a start some 3 ms.
    if (fromStdin && io.stdinIsTTY) throw usageError('- reads users from stdin, but stdin is a terminal', 'pipe a file in: sgq … - < users.txt');
    if (args.some((a) => a.trim() === '')) throw usageError('an empty user name was given');
    const all = unique(expand(args, io));
    const first: string[] = [];
    while (first.length < ahead) {
      const next = await all.next();
      if (next.done) break;
      first.push(next.value);
    }
    if (first.length === 0) throw usageError('no users given: stdin held none');
    return new Subjects(first, all, fromStdin);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<string> {
    yield* this.first;
    for (;;) {
      const next = await this.rest.next();
      if (next.done) return;
      yield next.value;
    }
  }
}

async function* expand(args: readonly string[], io: Pick<Io, 'stdin'>): AsyncGenerator<string> {
  for (const arg of args) {
    if (arg !== '-') yield arg.trim();
    else yield* lines(io.stdin);
  }
}

/** The users of a list, a line at a time, as the stream delivers them. */
async function* lines(stdin: Readable): AsyncGenerator<string> {
  let partial = '';
  stdin.setEncoding('utf8');
  for await (const chunk of stdin as AsyncIterable<string>) {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop()!;
    for (const line of parts) {
      const user = subjectOf(line);
      if (user) yield user;
    }
  }
  const user = subjectOf(partial);
  if (user) yield user;
}

/** A line's user: without a `#` comment and surrounding blanks (a CR included). */
const subjectOf = (line: string): string => {
  const hash = line.indexOf('#');
  return (hash === -1 ? line : line.slice(0, hash)).trim();
};

async function* unique(subjects: AsyncIterable<string>): AsyncGenerator<string> {
  const seen = new SeenNames();
  for await (const s of subjects) if (seen.add(s)) yield s;
}
