import type { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { usageError } from '../errors.js';

/**
 * The users (or list ids) of a command: its arguments, where `-` stands for stdin, one per
 * line, skipping blank lines and `#` comments. Each is asked once, in first-seen order.
 */
export async function readSubjects(args: readonly string[], stdin: Readable, stdinIsTTY: boolean): Promise<string[]> {
  const subjects: string[] = [];
  for (const arg of args) {
    if (arg !== '-') {
      subjects.push(arg.trim());
      continue;
    }
    if (stdinIsTTY) throw usageError('- reads users from stdin, but stdin is a terminal', 'pipe a file in: sgq … - < users.txt');
    const input = await text(stdin);
    for (const line of input.split(/\r?\n/)) {
      const user = line.replace(/#.*/, '').trim();
      if (user) subjects.push(user);
    }
  }
  if (subjects.some((s) => s === '')) throw usageError('an empty user name was given');
  const unique = [...new Set(subjects)];
  if (unique.length === 0) throw usageError('no users given: stdin held none');
  return unique;
}
