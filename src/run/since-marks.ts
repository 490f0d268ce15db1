import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { configError } from '../errors.js';
import { parseSince } from '../since.js';

// --since-last: per profile, route, how and user, the start of the last complete run.
// The file is small JSON, rewritten whole through a rename so a crash never leaves it torn.

export const markKey = (profile: string, route: string, how: string, user: string): string =>
  [profile, route, how, user].join(' ');

export class SinceMarks {
  private constructor(
    readonly file: string,
    private readonly marks: Record<string, string>,
  ) {}

  /** `state` is --state; otherwise SGQ_STATE, otherwise since-marks.json beside the config file. */
  static open(state: string | undefined, env: Record<string, string | undefined>, configPath: string | undefined): SinceMarks {
    const file = state ?? env.SGQ_STATE ?? join(configPath ? dirname(configPath) : '.', 'since-marks.json');
    let marks: Record<string, string> = {};
    try {
      const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
      if (parsed && typeof parsed === 'object' && 'marks' in parsed && typeof parsed.marks === 'object' && parsed.marks) {
        marks = parsed.marks as Record<string, string>;
      } else {
        throw new Error('no "marks" object');
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
        throw configError(`cannot read the --since-last state ${file}: ${(error as Error).message}`, 'fix or delete it (the next run then sends no since)');
      }
    }
    return new SinceMarks(file, marks);
  }

  /** The `since` to send, or undefined on the first run. */
  get(key: string): string | undefined {
    return this.marks[key];
  }

  set(key: string, startedAt: Date): void {
    this.marks[key] = parseSince(startedAt.toISOString());
    mkdirSync(dirname(this.file), { recursive: true });
    const temp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(temp, `${JSON.stringify({ marks: this.marks }, null, 2)}\n`, { mode: 0o600 });
    renameSync(temp, this.file);
  }
}
