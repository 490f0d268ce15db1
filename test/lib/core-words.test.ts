// No message of the core names a CLI flag, a command or `sgq config`: the library speaks its
// own words (`since`, `timeout`, `maxWait`), and src/cli/program/errors-to-flags.ts turns them into the
// CLI's. Checked twice: every string the core's source holds, and the errors its main paths throw.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { inCliWords } from '../../src/cli/program/errors-to-flags.js';
import { configError } from '../../src/core/errors.js';
import { toSgqError } from '../../src/core/errors.js';
import { resolveConfig } from '../../src/core/config.js';
import { parseSince } from '../../src/core/since.js';
import { chooseMatch, noIdentity } from '../../src/core/records/identity.js';
import { classify } from '../../src/core/classify.js';
import { SgqError, createClient } from '../../src/lib.js';
import { tempDir } from '../helpers/run.js';
import { envelope, useStubs } from '../helpers/stub-server.js';

const CLI_WORDS = /(^|[^\w-])--[a-z]|\bsgq (config|graph|alpha|metadata|lists|api|info|diff|fmt|describe|credits|sandbox|completion)\b/;

const core = fileURLToPath(new URL('../../src/core', import.meta.url));

// Strings of the core that are the CLI's own text, not messages: the settings' descriptions for
// `sgq config`, the exit codes' meanings for docs/exit-codes.md and `--help`, and ` --profile NAME` that
// the CLI's hints append.
const NOT_MESSAGES = new Set(['SETTINGS', 'EXIT_MEANINGS', 'profileFlag']);

function stringsOf(file: string): { text: string; line: number }[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: { text: string; line: number }[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isVariableDeclaration(node) || ts.isFunctionDeclaration(node)) && node.name && NOT_MESSAGES.has(node.name.getText())) return;
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node)) {
      found.push({ text: node.text, line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const wordsOf = (e: SgqError) => `${e.message}; ${e.hint ?? ''}`;

describe('the core speaks the library\'s words', () => {
  it('no string of src/core names a CLI flag, a command or `sgq config`', () => {
    const files = readdirSync(core, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    expect(files.length).toBeGreaterThan(20);
    const hits = files.flatMap((f) => stringsOf(join(core, f)).filter((s) => CLI_WORDS.test(s.text)).map((s) => `${f}:${s.line}: ${s.text}`));
    expect(hits).toEqual([]);
  });

  it('the scan would catch one', () => {
    expect(CLI_WORDS.test('raise --timeout')).toBe(true);
    expect(CLI_WORDS.test('set it with `sgq config set api-key`')).toBe(true);
    expect(CLI_WORDS.test('invalid since "x"; an age such as 7d')).toBe(false);
  });

  it('the errors of its main paths, and their CLI words', async () => {
    const thrown: SgqError[] = [];
    const grab = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        thrown.push(e as SgqError);
      }
    };
    for (const bad of ['yesterday', '2024-02-30', '2024-01-01T00:00:00+25:00', '99999d']) grab(() => parseSince(bad));
    grab(() => resolveConfig({ profile: 'nope' }, { SGQ_CONFIG_DIR: tempDir() }));
    grab(() => resolveConfig({}, { SGQ_CONFIG_DIR: tempDir(), SGQ_TIMEOUT: 'soon' }));
    thrown.push(noIdentity('OLD', 'uid', []), noIdentity('OLD', undefined, []));
    grab(() => chooseMatch({ where: 'A', records: true, fields: { id: 'user_id' } } as never, { where: 'B', records: true, fields: { name: 'username' } } as never));
    for (const [status, text] of [[401, '{}'], [200, '<html>'], [200, '{"message":"soon"}'], [429, '{"Error":"subscription expired","Endpoint":"graph","Current credits":0}']] as const) {
      grab(() => classify(status, {}, text, { key: { masked: 'ab…yz', source: { profile: 'work' } } }));
    }
    grab(() => classify(401, {}, '{}', {}));
    thrown.push(toSgqError(new Error('boom')));
    const sgq = createClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'k', env: { SGQ_CONFIG_DIR: tempDir() } });
    for (const call of [() => sgq.graph.followers('x', { since: 'never' }), () => sgq.metadata.tweets('x', { since: '1d' }), () => sgq.graph.followers('x', { limit: 0 }), () => sgq.graph.followers('x', { timeout: -1 })]) grab(call);
    expect(thrown.length).toBeGreaterThan(15);
    for (const e of thrown) {
      expect(e).toBeInstanceOf(SgqError);
      expect(wordsOf(e)).not.toMatch(CLI_WORDS);
    }
    // The same failures in the CLI's words name its flags where they name an option.
    const since = inCliWords(thrown[0]!);
    expect(since.message).toBe('invalid --since "yesterday"');
    const profile = thrown.find((e) => e.details.fix === 'create-profile')!;
    expect(inCliWords(profile).hint).toBe('create it with `sgq config set base-url URL --profile nope`');
    expect(inCliWords(configError('x', 'y', { fix: 'check-key', profile: 'work' })).hint).toContain('sgq config get api-key --profile work');
  });
});

describe('network failures in the library\'s words', () => {
  const stub = useStubs();
  it('a timeout names the option timeout, with the route and kind', async () => {
    const s = await stub(() => new Promise(() => undefined));
    const sgq = createClient({ baseUrl: s.url, apiKey: 'k', timeout: 200, retries: 0, env: { SGQ_CONFIG_DIR: tempDir() } });
    const error = (await sgq.graph.followers('x').toArray({ limit: 1 }).catch((e: unknown) => e)) as SgqError;
    expect(error).toBeInstanceOf(SgqError);
    expect(error.kind).toBe('network');
    expect(error.details).toMatchObject({ option: 'timeout', route: 'graph/get_followers', fix: 'raise-option' });
    expect(wordsOf(error)).not.toMatch(CLI_WORDS);
    expect(inCliWords(error).hint).toBe('raise --timeout, or try again later');
    await sgq.close();
  });

  it('error records carry status and records', async () => {
    const s = await stub([{ body: envelope(1, null, [{ error: 'no data for username = x' }]) }]);
    const sgq = createClient({ baseUrl: s.url, apiKey: 'k', env: { SGQ_CONFIG_DIR: tempDir() } });
    const error = (await sgq.graph.followers('x').toArray({ limit: 1 }).catch((e: unknown) => e)) as SgqError;
    expect(error.kind).toBe('service');
    expect(error.details).toMatchObject({ status: 200, records: ['no data for username = x'], route: 'graph/get_followers' });
    await sgq.close();
  });
});
