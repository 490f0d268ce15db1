import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SgqError } from '../../src/core/errors.js';
import { SinceMarks } from '../../src/cli/run/since-marks.js';
import { tempDir } from '../helpers/run.js';

const SVC = 'https://svc.example';
const OWNER = { service: SVC, profile: 'default' };
const saved = (file: string): Record<string, string> => (JSON.parse(readFileSync(file, 'utf8')) as { services: Record<string, Record<string, string>> }).services[SVC]!;
/** A key as src/cli/commands/routes/runner.ts makes it: profile, route, how, user. */
const k = (user: string, profile = 'default') => `${profile} graph/get_followers username ${user}`;
const NIGHT = new Date('2026-11-20T03:15:00Z');
const NIGHT_MARK = '2026-11-20T03:15:00.000000+00:00';

describe('--since-last marks', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('a commit keeps the other marks and their order, and writes the same indented JSON as always', async () => {
    const file = join(tempDir(), 'marks.json');
    writeFileSync(file, JSON.stringify({ services: { [SVC]: { [k('x')]: 'old x', [k('y')]: 'old y' } } }));
    const marks = await SinceMarks.open(file, OWNER, { waitMs: 0 });
    marks.stage(k('y'), NIGHT);
    marks.stage(k('z'), new Date('2026-11-21T03:15:00Z'));
    // Staged marks are not the marks yet: the next run would not see them if this one died here.
    expect(marks.get(k('y'))).toBe('old y');
    await marks.commit();
    await marks.close();
    const expected = { [k('x')]: 'old x', [k('y')]: NIGHT_MARK, [k('z')]: '2026-11-21T03:15:00.000000+00:00' };
    expect(readFileSync(file, 'utf8')).toBe(`${JSON.stringify({ services: { [SVC]: expected } }, null, 2)}\n`);
    expect(marks.get(k('y'))).toBe(NIGHT_MARK);
    expect(readdirSync(join(file, '..'))).toEqual(['marks.json']);
  });

  it('a commit that fails changes neither the file nor the marks', async () => {
    const file = join(tempDir(), 'marks.json');
    writeFileSync(file, JSON.stringify({ services: { [SVC]: { x: 'old x' } } }));
    const marks = await SinceMarks.open(file, OWNER, { waitMs: 0 });
    // A name the rename cannot replace: a folder that is not empty.
    rmSync(file);
    mkdirSync(join(file, 'in-the-way'), { recursive: true });
    marks.stage('x', NIGHT);
    marks.stage('y', NIGHT);
    const failure = await marks.commit().then(() => undefined, (error: unknown) => error);
    expect(failure).toBeInstanceOf(SgqError);
    expect((failure as SgqError).message).toContain(`cannot save the --since-last marks in ${file}`);
    expect(marks.get('x')).toBe('old x');
    expect(marks.get('y')).toBeUndefined();
    rmSync(file, { recursive: true });
    await marks.drop();
    await marks.commit();
    await marks.close();
    expect(existsSync(file)).toBe(false);
    expect(readdirSync(join(file, '..'))).toEqual([]);
  });

  it('is due for a commit while records stream out at most once a second', async () => {
    let now = Date.now();
    vi.spyOn(Date, 'now').mockImplementation(() => now);
    const file = join(tempDir(), 'marks.json');
    const marks = await SinceMarks.open(file, OWNER, { waitMs: 0 });
    expect(marks.due).toBe(false);
    marks.stage('a', NIGHT);
    now += 999;
    expect(marks.due).toBe(false);
    now += 1;
    expect(marks.due).toBe(true);
    await marks.commit();
    expect(Object.keys(saved(file))).toEqual(['a']);
    marks.stage('b', NIGHT);
    expect(marks.due).toBe(false);
    // What is staged when the run ends without a commit was not kept: it is dropped.
    await marks.close();
    expect(Object.keys(saved(file))).toEqual(['a']);
  });

  it('does not send a mark from the future: a clock that was ahead wrote it', async () => {
    const file = join(tempDir(), 'marks.json');
    writeFileSync(file, JSON.stringify({ services: { [SVC]: { a: '2030-01-01T00:00:00.000000+00:00', b: NIGHT_MARK } } }));
    const marks = await SinceMarks.open(file, OWNER, { waitMs: 0 });
    expect(marks.sinceFor('a', NIGHT)).toEqual({ future: '2030-01-01T00:00:00.000000+00:00' });
    expect(marks.sinceFor('b', NIGHT)).toEqual({ since: NIGHT_MARK });
    expect(marks.sinceFor('c', NIGHT)).toEqual({});
    await marks.close();
  });

  it('gives each user the start of its own run, and refuses marks that are not an object of marks', async () => {
    const file = join(tempDir(), 'marks.json');
    const marks = await SinceMarks.open(file, OWNER, { waitMs: 0 });
    marks.stage('a', NIGHT);
    marks.stage('b', new Date('2026-11-21T03:15:00Z'));
    marks.stage('c', NIGHT);
    await marks.commit();
    await marks.close();
    expect(saved(file)).toEqual({ a: NIGHT_MARK, b: '2026-11-21T03:15:00.000000+00:00', c: NIGHT_MARK });

    writeFileSync(file, JSON.stringify({ marks: [] }));
    await expect(SinceMarks.open(file, OWNER, { waitMs: 0 })).rejects.toThrow(/cannot read the --since-last state .*"marks" is not an object/);
    writeFileSync(file, JSON.stringify({ services: { [SVC]: [] } }));
    await expect(SinceMarks.open(file, OWNER, { waitMs: 0 })).rejects.toThrow(/cannot read the --since-last state .*"services" is not an object of objects/);
    writeFileSync(file, JSON.stringify({ other: {} }));
    await expect(SinceMarks.open(file, OWNER, { waitMs: 0 })).rejects.toThrow(/no "services" object/);
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  it('keeps each service apart: the sandbox and another service never see or move the marks of the first', async () => {
    const file = join(tempDir(), 'marks.json');
    const real = await SinceMarks.open(file, OWNER, { waitMs: 0 });
    real.stage(k('jack'), NIGHT);
    await real.commit();
    await real.close();
    for (const service of ['sandbox', 'http://127.0.0.1:5000']) {
      const other = await SinceMarks.open(file, { service, profile: 'default' }, { waitMs: 0 });
      expect(other.sinceFor(k('jack'), NIGHT)).toEqual({});
      other.stage(k('jack'), new Date('2026-11-21T03:15:00Z'));
      await other.commit();
      await other.close();
    }
    const again = await SinceMarks.open(file, OWNER, { waitMs: 0 });
    expect(again.sinceFor(k('jack'), new Date('2026-11-22T00:00:00Z'))).toEqual({ since: NIGHT_MARK });
    await again.close();
    const all = (JSON.parse(readFileSync(file, 'utf8')) as { services: Record<string, unknown> }).services;
    expect(Object.keys(all).sort()).toEqual(['http://127.0.0.1:5000', 'sandbox', SVC].sort());
  });

  it('adopts the marks of sgq 3.x once, for the profile, on the first service other than the sandbox', async () => {
    const file = join(tempDir(), 'marks.json');
    const legacy = { [k('jack')]: NIGHT_MARK, [k('jack', 'work')]: NIGHT_MARK, [k('jack', 'default x')]: NIGHT_MARK };
    writeFileSync(file, JSON.stringify({ marks: legacy }));
    // The sandbox neither reads nor takes them.
    const sandbox = await SinceMarks.open(file, { service: 'sandbox', profile: 'default' }, { waitMs: 0 });
    expect(sandbox.sinceFor(k('jack'), new Date('2026-11-22T00:00:00Z'))).toEqual({});
    await sandbox.close();
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ marks: legacy });
    // A dry run reads them as the run would adopt them, and writes nothing.
    expect(SinceMarks.peek(file, OWNER).sinceFor(k('jack'), new Date('2026-11-22T00:00:00Z'))).toEqual({ since: NIGHT_MARK });
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ marks: legacy });
    // The nightly run sends the same since as before the upgrade, and the adoption is written at once.
    const nightly = await SinceMarks.open(file, OWNER, { waitMs: 0 });
    expect(nightly.sinceFor(k('jack'), new Date('2026-11-22T00:00:00Z'))).toEqual({ since: NIGHT_MARK });
    await nightly.close();
    const after = JSON.parse(readFileSync(file, 'utf8')) as { services: Record<string, Record<string, string>>; marks: Record<string, string> };
    expect(after.services[SVC]).toEqual({ [k('jack')]: NIGHT_MARK });
    // Other profiles' marks (even one whose name starts the same) wait for their own profile.
    expect(after.marks).toEqual({ [k('jack', 'work')]: NIGHT_MARK, [k('jack', 'default x')]: NIGHT_MARK });
    // Once: a profile later pointed at another service does not take them again.
    const elsewhere = await SinceMarks.open(file, { service: 'https://other.example', profile: 'default' }, { waitMs: 0 });
    expect(elsewhere.sinceFor(k('jack'), new Date('2026-11-22T00:00:00Z'))).toEqual({});
    await elsewhere.close();
  });
});
