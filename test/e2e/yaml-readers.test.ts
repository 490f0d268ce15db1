import fc from 'fast-check';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, parseDocument } from 'yaml';
import { createFormatter } from '../../src/cli/formats/formats.js';
import { RawNumber, stringifyJson, type Json } from '../../src/core/json.js';
import { sgq } from '../helpers/e2e.js';
import { LOOKALIKES, MULTILINGUAL, NUMBER_TOKENS, followerRecordsJson, pageJson } from '../helpers/hostile-text.js';
import { pyyamlJudge, pyyamlJudgesFiles, type YamlMode } from '../helpers/pyyaml.js';
import { tempDir } from '../helpers/run.js';
import { captureSink } from '../helpers/sink.js';
import { useStubs } from '../helpers/stub-server.js';

// sgq's YAML read back by the readers people use: PyYAML (YAML 1.1) and the yaml package (YAML
// 1.2). `-o yaml` is one document, a list of the records (PyYAML's safe_load, yaml's parse);
// `-o yaml-stream` one document a record (safe_load_all, parseAllDocuments). Each must read
// what its language's JSON reader reads from the NDJSON of the same records: the same strings,
// the same types, the same numbers.

const stubs = useStubs();
const env = (url: string) => ({ SGQ_BASE_URL: url, SGQ_API_KEY: 'k', SGQ_RETRIES: '0', XDG_CACHE_HOME: tempDir('sgq-cache-') });

/** What the yaml package reads: the list of `-o yaml`, or one value per document of a stream. */
function yamlPackageReads(text: string, mode: YamlMode, options: { intAsBigInt?: boolean } = {}): unknown[] {
  if (mode === 'yaml') {
    const doc = parseDocument(text, options);
    if (doc.errors.length) throw new Error(doc.errors[0]!.message);
    const list: unknown = doc.toJS();
    if (!Array.isArray(list)) throw new Error('not a list');
    return list;
  }
  const docs = parseAllDocuments(text, options);
  if (!Array.isArray(docs)) throw new Error('not a YAML stream');
  for (const doc of docs) if (doc.errors.length) throw new Error(doc.errors[0]!.message);
  return docs.map((d) => d.toJS());
}

describe.each(['yaml', 'yaml-stream'] as const)('-o %s of multilingual follower records, read back by PyYAML and the yaml package', (mode) => {
  it('every string, null and number comes back as the JSON readers read the NDJSON', async () => {
    const count = 150;
    const stub = await stubs(() => ({ text: pageJson(followerRecordsJson(count), count) }));
    const dir = tempDir();
    const files = { [mode]: join(dir, 'f.yaml'), ndjson: join(dir, 'f.ndjson') };
    for (const format of [mode, 'ndjson'] as const) {
      const r = await sgq(['graph', 'followers', 'jack', '-o', format, '--out', files[format]!, '--quiet'], { env: env(stub.url) });
      expect(r.exitCode, r.stderr).toBe(0);
    }
    const text = readFileSync(files[mode]!, 'utf8');
    const ndjson = readFileSync(files.ndjson!, 'utf8').split('\n').filter(Boolean);

    expect(await pyyamlJudgesFiles(files[mode]!, files.ndjson!, mode)).toEqual({ ok: true, documents: count });
    expect(yamlPackageReads(text, mode)).toEqual(ndjson.map((l) => JSON.parse(l) as unknown));
    // Integers of any size, read by a reader that keeps them.
    const ids = yamlPackageReads(text, mode, { intAsBigInt: true }).map((d) => (d as Record<string, unknown>).follower_userid);
    expect(ids).toEqual(Array.from({ length: count }, (_, i) => 10n ** 19n + BigInt(i)));

    // What a reader could not take, written as escapes: no tab, C0 or C1 control, NEL, U+2028 or BOM raw.
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\ufeff]/);
    expect(text).toContain(`"tab\\there"`);
    expect(text).toMatch(/: "yes"$/m);
    expect(text).toContain('follower_username: 山田太郎');
    // Numbers as sent; an exponent in the form YAML 1.1 reads as a number.
    const indent = mode === 'yaml' ? '  ' : '';
    expect(text).toMatch(new RegExp(`^${indent}follower_num_followers: 1\\.0E\\+400$`, 'm'));
    expect(text).toMatch(new RegExp(`^${indent}follower_num_followers: 0\\.12345678901234567890123$`, 'm'));
    expect(text).toMatch(new RegExp(`^${indent}follower_num_followers: 123456789012345678901234567890$`, 'm'));
    // One document, or one a record.
    expect(text.startsWith(mode === 'yaml' ? '- ' : '---\n')).toBe(true);
    expect(text.match(/^---/gm)?.length ?? 0).toBe(mode === 'yaml' ? 0 : count);
  });

  it('no records: an empty list, or an empty stream', async () => {
    const stub = await stubs(() => ({ text: pageJson('[]', 0) }));
    const r = await sgq(['graph', 'followers', 'jack', '-o', mode, '--quiet'], { env: env(stub.url) });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe(mode === 'yaml' ? '[]' : '');
    const dir = tempDir();
    writeFileSync(join(dir, 'f.yaml'), r.stdout);
    writeFileSync(join(dir, 'f.ndjson'), '');
    expect(await pyyamlJudgesFiles(join(dir, 'f.yaml'), join(dir, 'f.ndjson'), mode)).toEqual({ ok: true, documents: 0 });
  });
});

// Records of any shape, holding any string (of any code points, lone surrogates included),
// the lookalikes and real text above, and numbers of every JSON form.
const numberToken = fc
  .tuple(fc.boolean(), fc.oneof(fc.constant('0'), fc.bigInt({ min: 1n, max: 10n ** 30n }).map(String)), fc.option(fc.stringMatching(/^\d{1,25}$/)), fc.option(fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), fc.integer({ min: 0, max: 500 }))))
  .map(([negative, whole, fraction, exponent]) => `${negative ? '-' : ''}${whole}${fraction === null ? '' : `.${fraction}`}${exponent === null ? '' : exponent.join('')}`);
const text = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.string({ unit: 'grapheme' }),
  fc.constantFrom(...LOOKALIKES, ...MULTILINGUAL),
  fc.string({ unit: fc.constantFrom('\t', '\n', '\r', ' ', 'a', ':', '#', '-', '"', "'", '\\', '\u0085', '\u2028', '\ufeff', '\u00a0', '\u001b', '\u009b', '.', '0', '1') }),
  fc.tuple(fc.constantFrom(...LOOKALIKES), fc.constantFrom('', ' ', '\t', '\n', ' #', ':')).map(([a, b]) => a + b),
);
const { value } = fc.letrec<{ value: Json; leaf: Json }>((tie) => ({
  leaf: fc.oneof(text, fc.constant(null), fc.boolean(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer(), numberToken.map((t) => new RawNumber(t))),
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, tie('leaf'), fc.array(tie('value'), { maxLength: 4 }), fc.dictionary(text, tie('value'), { maxKeys: 4 })),
}));
const record = fc.dictionary(text, value, { maxKeys: 6 }) as fc.Arbitrary<Record<string, Json>>;

describe('property: any records', () => {
  const python = pyyamlJudge();
  afterAll(() => python.close());

  /** Both readers' verdicts on records written by both YAML formats, each page a write. */
  async function readBack(records: Record<string, Json>[]): Promise<string> {
    const ndjson = records.map((r) => `${stringifyJson(r)}\n`).join('');
    const texts: string[] = [];
    for (const mode of ['yaml', 'yaml-stream'] as const) {
      const sink = captureSink();
      const f = await createFormatter(mode, sink);
      for (const record of records) f.write([record], true);
      f.end();
      expect(await python.judge(sink.text, ndjson, mode)).toEqual({ ok: true, documents: records.length });
      expect(yamlPackageReads(sink.text, mode)).toEqual(ndjson.split('\n').filter(Boolean).map((l) => JSON.parse(l) as unknown));
      texts.push(sink.text);
    }
    return texts.join('');
  }

  it('shapes: empty records and containers, lists of lists, deep nesting, keys past 1,024 characters', async () => {
    let deep: Json = 'bottom';
    for (let i = 0; i < 200; i++) deep = i % 2 ? { [`k${i}`]: deep } : [deep, i];
    const long = `${'键'.repeat(600)}: #${'x'.repeat(600)}`;
    const text = await readBack([{}, { a: [], b: {}, c: [[], [{}], [[1, ['x']]]], d: [{ e: null, f: [{ g: 'yes' }] }] }, { deep }, { [long]: { [long]: [long] } }]);
    expect(text).toContain('? "');
  });

  it('PyYAML and the yaml package read back what JSON readers read from the NDJSON', async () => {
    NUMBER_TOKENS.forEach((t) => expect(JSON.parse(t)).toBeTypeOf('number'));
    await fc.assert(
      fc.asyncProperty(fc.array(record, { minLength: 1, maxLength: 3 }), async (records) => {
        await readBack(records);
      }),
      { numRuns: 300 },
    );
  }, 120_000);
});
