import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { changeLines, changeRecords, countsText } from '../../src/cli/snapshots/churn-text.js';
import { isCanonicalObject } from '../../src/core/diff/canonical-line.js';
import type { Change, ChangeKind } from '../../src/core/diff/merge-diff.js';
import { stringifyJson } from '../../src/core/json.js';
import { LOOKALIKES, MULTILINGUAL, NUMBER_TOKENS, followerRecordsJson } from '../helpers/hostile-text.js';

// Issue 22: `sgq diff -o ndjson` writes a change from its record line's own text when that text
// is what parsing and writing it again gives. Whatever the line, the output must be the bytes
// the long way (changeRecords, then stringifyJson as the NDJSON formatter does) gives.

/** The long way: what the NDJSON formatter writes for these changes. */
const longWay = (changes: Change[], renames: boolean) => changeRecords(changes, renames).map((r) => `${stringifyJson(r)}\n`).join('');

const KINDS: ChangeKind[] = ['gained', 'lost', 'renamed', 'changed'];

/** JSON text pieces that a line may be made of, canonical or not. */
const key = fc.oneof(fc.constantFrom('username', 'id', 'bio', 'change', 'renamed_from', '0', '12', '01', '__proto__', '', 'a\u0000', 'é', 'tab\t'), fc.string({ maxLength: 4 }));
const stringToken = fc.oneof(
  fc.constantFrom(...MULTILINGUAL, ...LOOKALIKES).map((s) => JSON.stringify(s)),
  // Escapes JSON.stringify does not write: \/, \u00e9, uppercase hex, an escaped pair, a lone surrogate.
  fc.constantFrom('"a\\/b"', '"\\u00e9"', '"\\u001F"', '"\\u001f"', '"\\ud83d\\ude00"', '"\\ud800"', '"\\u0008"', '"\\b\\f\\n\\r\\t"', '"😀"'),
);
const scalar = fc.oneof(stringToken, fc.constantFrom(...NUMBER_TOKENS, 'true', 'false', 'null', '12345678901234567891', '-1.50'));
const value: fc.Arbitrary<string> = fc.letrec<{ v: string }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    fc.array(tie('v'), { maxLength: 3 }).map((items) => `[${items.join(',')}]`),
    fc.array(fc.tuple(key, tie('v')), { maxLength: 3 }).map((pairs) => `{${pairs.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`),
  ),
})).v;
/** A record line: pairs written canonically, or with spaces, as service lines and hand-made files may be. */
const line = fc
  .tuple(fc.array(fc.tuple(key, value), { maxLength: 6 }), fc.constantFrom('', ' '))
  .map(([pairs, space]) => `{${pairs.map(([k, v]) => `${JSON.stringify(k)}:${space}${v}`).join(',')}}`);

describe('changeLines', () => {
  it('writes the bytes the NDJSON formatter writes, whatever the record line', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(line, fc.constantFrom(...KINDS), fc.option(fc.constantFrom(...MULTILINGUAL), { nil: undefined })), { maxLength: 5 }), fc.boolean(), (items, renames) => {
        const changes: Change[] = items.map(([text, change, from]) => ({ change, line: text, from }));
        expect(changeLines(changes, renames)).toBe(longWay(changes, renames));
      }),
      { numRuns: 2000 },
    );
  });

  it('takes the line as it is when it is canonical, and refuses what the long way would change', () => {
    // The service's records, every script and number token among them: each line as it came.
    const lines = followerRecordsJson(120).slice(1, -1).split(/,(?=\{"follower_username":)/);
    expect(lines).toHaveLength(120);
    const changes: Change[] = lines.map((text, i) => ({ change: KINDS[i % 4]!, line: text, from: i % 3 ? 'was' : undefined }));
    for (const renames of [false, true]) expect(changeLines(changes, renames)).toBe(longWay(changes, renames));
    // Most of them are taken as they are (the others hold an escape JSON.stringify would not write).
    expect(lines.filter((text) => isCanonicalObject(text, ['change'])).length).toBeGreaterThan(60);
    // Real-world text: CJK, emoji, tabs, escaped controls, ids past 2^64 and long decimals, kept as sent.
    const real = '{"username":"山田太郎","id":18446744073709551617,"bio":"tab\\there 👨‍👩‍👧‍👦 \\u001b[31m","score":0.12345678901234567890123,"n":1.0}';
    expect(isCanonicalObject(real, ['change'])).toBe(true);
    expect(changeLines([{ change: 'lost', line: real }])).toBe(`{"change":"lost",${real.slice(1)}\n`);
    expect(changeLines([{ change: 'renamed', line: '{}', from: 'old "name"' }], true)).toBe('{"change":"renamed","renamed_from":"old \\"name\\""}\n');
    for (const refused of [
      '{"a":1,"a":2}', // a key twice: the parser keeps the last
      '{"b":1,"1":2}', // an array index: JS objects put it first
      '{"a":"\\u00e9"}', // an escape JSON.stringify does not write
      '{"a":"\\ud800"}', // a lone surrogate, written escaped
      '{ "a":1}',
      '{"change":"x"}', // the record's own field would take the change's place
      '{"a":1}x',
      '{"a":01}',
      '[1]',
    ])
      expect(isCanonicalObject(refused, ['change']), refused).toBe(false);
    expect(isCanonicalObject('{"renamed_from":1}', ['change'])).toBe(true);
    expect(isCanonicalObject('{"renamed_from":1}', ['change', 'renamed_from'])).toBe(false);
  });

  it('gives a line the long way cannot read the long way, so that it fails as before', () => {
    expect(() => changeLines([{ change: 'gained', line: '{"username":"x",oops}' }])).toThrow();
  });
});

describe('countsText', () => {
  it('writes counts as toLocaleString("en-US") does', () => {
    fc.assert(
      fc.property(fc.nat(), fc.nat(9_999_999_999), (a, b) => {
        const counts = { gained: a, lost: b, renamed: 0, changed: 1000, unchanged: 999 };
        const n = (x: number) => x.toLocaleString('en-US');
        expect(countsText(counts, { changed: true, renames: true })).toBe(`${n(a)} gained, ${n(b)} lost, 0 renamed, 1,000 changed, 999 unchanged`);
      }),
    );
  });
});
