import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fitHelpText, shellWords } from '../../src/cli/help/wrap.js';

// The text after a help's options, fitted to the help's width: examples wrap only between
// shell words (with ` \` so they still paste as one command), prose at spaces.

/** The example lines joined back as the shell would join them (backslash-newline removed). */
const pasted = (lines: string[]): string => lines.map((l) => l.replace(/ \\$/, '')).join(' ').replace(/^\s*\$ /, '');

describe('fitHelpText', () => {
  it('wraps a long example between words, each cut line ending in a continuation', () => {
    const example = '  $ sgq api metadata/get_tweets -f user=jack -f how=username -F page=1 --paginate --limit 100';
    const lines = fitHelpText(example, 80).split('\n');
    expect(lines).toEqual(['  $ sgq api metadata/get_tweets -f user=jack -f how=username -F page=1 \\', '      --paginate --limit 100']);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(80);
    expect(shellWords(pasted(lines))).toEqual(shellWords(example.replace(/^\s*\$ /, '')));
  });

  it('leaves lines that fit alone, and everything at a width too narrow to wrap', () => {
    const text = '\nExamples:\n  $ sgq graph followers jack\n\nA note.';
    expect(fitHelpText(text, 80)).toBe(text);
    const long = `  $ sgq ${'x '.repeat(40)}`;
    expect(fitHelpText(long, 39)).toBe(long);
  });

  it('keeps a quoted argument whole, spaces and all', () => {
    const example = `  $ sgq describe --json | jq '.commands[] | select(.runnable) | .name' | sort | uniq -c | sort -rn | head`;
    const lines = fitHelpText(example, 50).split('\n');
    expect(lines.some((l) => l.includes(`'.commands[] | select(.runnable) | .name'`))).toBe(true);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(50);
  });

  it('moves a comment that does not fit onto its own line above the command', () => {
    const lines = fitHelpText('  $ sgq config set api-key                 # reads the key from stdin, stays out of history', 80).split('\n');
    expect(lines).toEqual(['  # reads the key from stdin, stays out of history', '  $ sgq config set api-key']);
  });

  it('wraps prose at spaces, keeping its indent', () => {
    const lines = fitHelpText(`  ${'word '.repeat(30).trim()}`, 41).split('\n');
    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines) {
      expect(line.length).toBeLessThanOrEqual(41);
      expect(line).toMatch(/^ {2}word( word)*$/);
    }
  });

  it('never cuts a word: any example at any width pastes back as the same words', () => {
    const word = fc.stringMatching(/^[a-z0-9=./-]{1,30}$/);
    fc.assert(
      fc.property(fc.array(word, { minLength: 1, maxLength: 30 }), fc.integer({ min: 40, max: 200 }), (words, width) => {
        const lines = fitHelpText(`  $ ${words.join(' ')}`, width).split('\n');
        expect(shellWords(pasted(lines))).toEqual(words);
        lines.forEach((line, i) => {
          const alone = line.trim().replace(/^\$ /, '').replace(/ \\$/, '');
          // Only a line of one word too wide for any line may pass the width.
          if (line.length > width) expect(shellWords(alone), `line ${i}`).toHaveLength(1);
        });
      }),
    );
  });
});

describe('shellWords', () => {
  it('splits as the shell does, keeping quotes and escapes in their word', () => {
    expect(shellWords(`jq -r '.a | .b' "x y" a\\ b --arg='p q'`)).toEqual(['jq', '-r', `'.a | .b'`, '"x y"', 'a\\ b', `--arg='p q'`]);
  });
});
