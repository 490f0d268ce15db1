// Fits the text after a help's options (notes, examples, footer) to the help's width, the way
// Commander fits the options: prose wraps at spaces, keeping its indent; an example (`  $ …`)
// wraps only between shell words, each cut line ending in ` \` so the example still pastes
// as one command, and a comment that does not fit moves onto its own line above the command.
// Nothing is ever cut inside a word or a flag; a single word wider than the help stays whole.

/** Below this width Commander stops wrapping too (its minWidthToWrap). */
const MIN_WIDTH = 40;
const EXAMPLE = /^(\s*)\$ (.*)$/;

export function fitHelpText(text: string, width: number): string {
  if (width < MIN_WIDTH) return text;
  return text
    .split('\n')
    .flatMap((line) => {
      if (line.length <= width) return [line];
      const example = EXAMPLE.exec(line);
      return example ? fitExample(example[1]!, example[2]!, width) : fitProse(line, width);
    })
    .join('\n');
}

function fitExample(indent: string, command: string, width: number): string[] {
  const { code, comment } = splitComment(command);
  const lines = comment === undefined ? [] : fitProse(`${indent}# ${comment}`, width, `${indent}# `);
  const first = `${indent}$ `;
  const next = `${indent}    `;
  let line = first;
  for (const word of shellWords(code)) {
    const atStart = line === first || line === next;
    // The line is kept within width with room for the ` \` that continues it.
    if (!atStart && line.length + 1 + word.length + 2 > width) {
      lines.push(`${line} \\`);
      line = next;
    }
    line += line === first || line === next ? word : ` ${word}`;
  }
  lines.push(line);
  return lines;
}

function fitProse(line: string, width: number, indent = /^\s*/.exec(line)![0]): string[] {
  const lines: string[] = [];
  let current = '';
  for (const word of line.slice(indent.length).split(/ +/).filter(Boolean)) {
    if (current && indent.length + current.length + 1 + word.length > width) {
      lines.push(indent + current);
      current = word;
    } else {
      current = current ? `${current} ${word}` : word;
    }
  }
  lines.push(indent + current);
  return lines;
}

/**
 * The words of a command line as the shell splits it, quotes kept: `jq '.a | .b'` is two
 * words. A word of several quoted parts (`--arg='x y'`) is one.
 */
export function shellWords(command: string): string[] {
  const words: string[] = [];
  let word = '';
  let quote: string | undefined;
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (quote) {
      if (c === '\\' && quote === '"' && i + 1 < command.length) word += c + command[++i];
      else word += c;
      if (c === quote) quote = undefined;
    } else if (c === ' ') {
      if (word) words.push(word);
      word = '';
    } else {
      if (c === '"' || c === "'") quote = c;
      if (c === '\\' && i + 1 < command.length) word += c + command[++i];
      else word += c;
    }
  }
  if (word) words.push(word);
  return words;
}

/** A trailing `# comment` outside quotes, set off by a space, and the command before it. */
function splitComment(command: string): { code: string; comment?: string } {
  const words = shellWords(command);
  const at = words.findIndex((w) => w.startsWith('#'));
  if (at <= 0) return { code: command };
  return { code: words.slice(0, at).join(' '), comment: words.slice(at).join(' ').replace(/^#\s*/, '') };
}
