import { describe, expect, it } from 'vitest';
import { visible, visibleJson } from '../../src/cli/terminal/visible.js';
import { LOOKALIKES, MULTILINGUAL } from '../helpers/hostile-text.js';

// The one decision of what text sgq did not write may hold on a terminal (src/cli/terminal/visible.ts).
const ACTS = /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069\p{Surrogate}]/u;
const TEXTS = [...MULTILINGUAL, ...LOOKALIKES, 'osc\u001b]52;c;eA==\u0007', 'c1\u0090dcs\u009d\u009c', 'iso\u2066\u2067\u2068\u2069', '\u202a\u202b\u202c\u202d'];

describe('visible', () => {
  it.each(TEXTS.map((t) => [t]))('%j: nothing a terminal acts on; escaped once only; plain text untouched', (text) => {
    const shown = visible(text);
    expect(shown).not.toMatch(ACTS);
    expect(visible(shown)).toBe(shown);
    if (!ACTS.test(text)) expect(shown).toBe(text);
  });

  it('escapes as the table does, and keeps what it is told to', () => {
    expect(visible('a\nb\r\tc\u001b[2J\u009b\u202e\u2028\u007f')).toBe('a\\nb\\r\\tc\\u{1b}[2J\\u{9b}\\u{202e}\\u{2028}\\u{7f}');
    expect(visible('a\nb\tc\rd', '\n\t')).toBe('a\nb\tc\\rd');
  });
});

describe('visibleJson', () => {
  it.each(TEXTS.map((t) => [t]))('%j: still JSON of the same value, nothing a terminal acts on', (text) => {
    const json = JSON.stringify({ [text]: [text] });
    const shown = visibleJson(json);
    expect(shown).not.toMatch(ACTS);
    expect(JSON.parse(shown)).toEqual(JSON.parse(json));
  });
});
