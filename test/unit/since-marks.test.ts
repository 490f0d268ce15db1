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
    marks.commit();
    marks.close();
    const expected = { x: 'old x', y: NIGHT_MARK, z: '2026-11-21T03:15:00.000000+00:00' };
    expect(readFileSync(file, 'utf8')).toBe(`${JSON.stringify({ marks: expected }, null, 2)}\n`);
    expect(marks.get('y')).toBe(NIGHT_MARK);
    expect(readdirSync(join(file, '..'))).toEqual(['marks.json']);
  });

  it('a commit that fails changes neither the file nor the marks, and stops every later commit', async () => {
    const file = join(tempDir(), 'marks.json');
    writeFileSync(file, JSON.stringify({ marks: { x: 'old x' } }));
    const marks = await SinceMarks.open(file, { waitMs: 0 });
    // A name the rename cannot replace: a folder that is not empty.
    rmSync(file);
    mkdirSync(join(file, 'in-the-way'), { recursive: true });
    marks.stage('x', NIGHT);
    marks.stage('y', NIGHT);
    marks.commit();
    expect(marks.failure).toBeInstanceOf(SgqError);
    expect(marks.failure?.message).toContain(`cannot save the --since-last marks in ${file}`);
    expect(marks.get('x')).toBe('old x');
    expect(marks.get('y')).toBeUndefined();
    rmSync(file, { recursive: true });
    marks.commit();
    marks.close();
    expect(existsSync(file)).toBe(false);
    expect(readdirSync(join(file, '..'))).toEqual([]);
  });

  it('while records stream out, commits once the output is safe and a second has passed, never more often', async () => {
    let now = Date.now();
    vi.spyOn(Date, 'now').mockImplementation(() => now);
    const file = join(tempDir(), 'marks.json');
    const marks = await SinceMarks.open(file, { waitMs: 0 });
    let safe = false;
    marks.commitWhileStreaming(() => safe);
    marks.stage('a', NIGHT);
    now += 999;
    marks.stage('b', NIGHT);
    expect(existsSync(file)).toBe(false);
    now += 1;
    marks.stage('c', NIGHT);
    expect(existsSync(file), 'committed before the output was safe').toBe(false);
    safe = true;
    marks.stage('d', NIGHT);
    expect(Object.keys(saved(file))).toEqual(['a', 'b', 'c', 'd']);
    now += 999;
    marks.stage('e', NIGHT);
    expect(Object.keys(saved(file))).toEqual(['a', 'b', 'c', 'd']);
    now += 1;
    marks.stage('f', NIGHT);
    expect(Object.keys(saved(file))).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
    // What is staged when the run ends without a final commit was not kept: it is dropped.
    marks.stage('g', NIGHT);
    marks.close();
    expect(Object.keys(saved(file))).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
  });

  it('gives each user the start of its own run, and refuses marks that are not an object of marks', async () => {
    const file = join(tempDir(), 'marks.json');
    const marks = await SinceMarks.open(file, { waitMs: 0 });
    marks.stage('a', NIGHT);
    marks.stage('b', new Date('2026-11-21T03:15:00Z'));
    marks.stage('c', NIGHT);
    marks.commit();
    marks.close();
    expect(saved(file)).toEqual({ a: NIGHT_MARK, b: '2026-11-21T03:15:00.000000+00:00', c: NIGHT_MARK });

    writeFileSync(file, JSON.stringify({ marks: [] }));
    await expect(SinceMarks.open(file, { waitMs: 0 })).rejects.toThrow(/cannot read the --since-last state .*no "marks" object/);
    expect(existsSync(`${file}.lock`)).toBe(false);
  });
});
