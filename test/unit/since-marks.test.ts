import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SgqError } from '../../src/core/errors.js';
import { SinceMarks } from '../../src/cli/run/since-marks.js';
import { tempDir } from '../helpers/run.js';

const saved = (file: string): Record<string, string> => (JSON.parse(readFileSync(file, 'utf8')) as { marks: Record<string, string> }).marks;
const NIGHT = new Date('2026-11-20T03:15:00Z');
const NIGHT_MARK = '2026-11-20T03:15:00.000000+00:00';

describe('--since-last marks', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('a commit keeps the other marks and their order, and writes the same indented JSON as always', async () => {
    const file = join(tempDir(), 'marks.json');
    writeFileSync(file, JSON.stringify({ marks: { x: 'old x', y: 'old y' } }));
    const marks = await SinceMarks.open(file, { waitMs: 0 });
    marks.stage('y', NIGHT);
    marks.stage('z', new Date('2026-11-21T03:15:00Z'));
    // Staged marks are not the marks yet: the next run would not see them if this one died here.
    expect(marks.get('y')).toBe('old y');
    await marks.commit();
    await marks.close();
    const expected = { x: 'old x', y: NIGHT_MARK, z: '2026-11-21T03:15:00.000000+00:00' };
    expect(readFileSync(file, 'utf8')).toBe(`${JSON.stringify({ marks: expected }, null, 2)}\n`);
    expect(marks.get('y')).toBe(NIGHT_MARK);
    expect(readdirSync(join(file, '..'))).toEqual(['marks.json']);
  });

  it('a commit that fails changes neither the file nor the marks', async () => {
    const file = join(tempDir(), 'marks.json');
    writeFileSync(file, JSON.stringify({ marks: { x: 'old x' } }));
    const marks = await SinceMarks.open(file, { waitMs: 0 });
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
    const marks = await SinceMarks.open(file, { waitMs: 0 });
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
    writeFileSync(file, JSON.stringify({ marks: { a: '2030-01-01T00:00:00.000000+00:00', b: NIGHT_MARK } }));
    const marks = await SinceMarks.open(file, { waitMs: 0 });
    expect(marks.sinceFor('a', NIGHT)).toEqual({ future: '2030-01-01T00:00:00.000000+00:00' });
    expect(marks.sinceFor('b', NIGHT)).toEqual({ since: NIGHT_MARK });
    expect(marks.sinceFor('c', NIGHT)).toEqual({});
    await marks.close();
  });

  it('gives each user the start of its own run, and refuses marks that are not an object of marks', async () => {
    const file = join(tempDir(), 'marks.json');
    const marks = await SinceMarks.open(file, { waitMs: 0 });
    marks.stage('a', NIGHT);
    marks.stage('b', new Date('2026-11-21T03:15:00Z'));
    marks.stage('c', NIGHT);
    await marks.commit();
    await marks.close();
    expect(saved(file)).toEqual({ a: NIGHT_MARK, b: '2026-11-21T03:15:00.000000+00:00', c: NIGHT_MARK });

    writeFileSync(file, JSON.stringify({ marks: [] }));
    await expect(SinceMarks.open(file, { waitMs: 0 })).rejects.toThrow(/cannot read the --since-last state .*no "marks" object/);
    expect(existsSync(`${file}.lock`)).toBe(false);
  });
});
