import { createWriteStream, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { join } from 'node:path';
import { createGzip } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { sgq } from '../helpers/e2e.js';
import { tempDir } from '../helpers/run.js';
import { onLinuxAsRoot, useTmpfs } from '../helpers/tmpfs.js';

// `sgq diff … | head`: a reader that goes away stops the diff at its next batch, and sgq exits
// 0 quietly (docs/failures.md, "Pipes and signals"), as a closed pipe stops an export's
// fetching: both ways a diff reads (two stored snapshots merged as bytes; two exports joined
// by hash on two threads, spilling), with nothing of the spill left behind.

const RECORDS = 200_000;
const line = (i: number) => `{"username":"f${String(i).padStart(9, '0')}","last_checked":"2026-11-01T00:00:00.${String(i % 1e6).padStart(6, '0')}+00:00"}\n`;

/** Gzip NDJSON of the records of the numbers given, in their order; returns how many. */
async function writeGzip(file: string, numbers: Iterable<number>): Promise<number> {
  let count = 0;
  const lines = Readable.from((function* () {
    for (const i of numbers) {
      count++;
      yield line(i);
    }
  })());
  await pipeline(lines, createGzip({ level: 1 }), createWriteStream(file));
  return count;
}

/** Every number below RECORDS but every 34th (from `skip`), in order or scattered. */
function* numbers(skip: number, scattered: boolean): Generator<number> {
  for (let j = 0; j < RECORDS; j++) {
    const i = scattered ? (j * 7919) % RECORDS : j;
    if (i % 34 !== skip) yield i;
  }
}

/** Runs the diff with its spill in a folder of its own and closes its stdout at the first bytes. */
async function closedAtFirstBytes(args: string[]) {
  const tmp = tempDir('sgq-diff-tmp-');
  const child = sgq(args, { env: { TMPDIR: tmp }, timeout: 120_000 });
  child.stdout!.once('data', () => child.stdout!.destroy());
  const r = await child;
  return { r, left: readdirSync(tmp) };
}

describe('sgq diff into a reader that goes away', () => {
  const dir = tempDir('sgq-diff-pipe-');
  const store = join(dir, 'snapshots');
  const exports = [join(dir, 'old.ndjson.gz'), join(dir, 'new.ndjson.gz')];
  beforeAll(async () => {
    // Two snapshots as sgq 3.x kept them (the first diff takes them over as its service's).
    const folder = join(store, 'default', 'graph.get_followers', 'username', 'piped');
    mkdirSync(folder, { recursive: true });
    for (const [takenAt, skip] of [['2026-11-20T03:15:00.000Z', 1], ['2026-11-21T03:15:00.000Z', 0]] as const) {
      const base = `${takenAt.replaceAll(':', '-')}-test0`;
      const records = await writeGzip(join(folder, `${base}.ndjson.gz`), numbers(skip, false));
      const meta = { version: 1, profile: 'default', route: 'graph/get_followers', how: 'username', user: 'piped', taken_at: takenAt, complete: true, pages: Math.ceil(records / 500), records, credits_used: 1, sorted_by: 'username', file: `${base}.ndjson.gz` };
      writeFileSync(join(folder, `${base}.json`), JSON.stringify(meta));
    }
    await Promise.all(exports.map((file, skip) => writeGzip(file, numbers(1 - skip, true))));
  }, 60_000);

  it('reads every change when the reader reads them all (the counts of the merge)', async () => {
    const r = await sgq(['diff', 'piped', '--snapshot-dir', store], { timeout: 120_000 });
    expect(r.exitCode, r.stderr).toBe(0);
    const lost = Math.ceil(RECORDS / 34);
    expect(r.stdout.split('\n').filter(Boolean)).toHaveLength(2 * lost);
    expect(r.stderr).toContain(`${lost.toLocaleString('en-US')} gained, ${lost.toLocaleString('en-US')} lost`);
  }, 120_000);

  it('two stored snapshots: stops, exit 0, nothing on stderr', async () => {
    const { r, left } = await closedAtFirstBytes(['diff', 'piped', '--snapshot-dir', store]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    expect(left).toEqual([]);
  }, 120_000);

  describe.runIf(onLinuxAsRoot)('onto a full disk (a 64 KiB tmpfs)', () => {
    const disk = useTmpfs('64k');
    it('--out: stops, fails with one line (no counts: the diff did not finish) naming where the changes written are', async () => {
      const out = join(disk.path, 'changes.ndjson');
      const r = await sgq(['diff', 'piped', '--snapshot-dir', store, '--out', out], { timeout: 120_000 });
      expect(r.exitCode, r.stderr).toBe(1);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toContain(`the disk is full (ENOSPC); ${out} not created; the records written before the failure are in ${out}.partial`);
      expect(readdirSync(disk.path)).toEqual(['changes.ndjson.partial']);
    }, 120_000);
  });

  it('two exports joined by hash: stops, exit 0, nothing on stderr, its spill removed', async () => {
    const { r, left } = await closedAtFirstBytes(['diff', ...exports]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    expect(left).toEqual([]);
  }, 120_000);
});
