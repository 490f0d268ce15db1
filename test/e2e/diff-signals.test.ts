import { createWriteStream, readdirSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { sgq } from '../helpers/e2e.js';
import { tempDir } from '../helpers/run.js';
import { waitFor } from '../helpers/wait.js';
import { hostTag } from '../../src/fs/temp-names.js';

// Issue 18 #14: `sgq diff` stops within a second of SIGTERM or SIGINT in every phase, and a
// line of any length costs linear time and bounded memory.

const LINES = 3_000_000;

/** An unsorted export of `LINES` records, `offset` shifting every name (so the two sides differ wholly). */
async function writeExport(file: string, offset: number): Promise<void> {
  const out = createWriteStream(file);
  let chunk = '';
  for (let i = 0; i < LINES; i++) {
    chunk += `{"username":"u${((i * 2654435761 + offset) % 4294967296).toString(36)}"}\n`;
    if (chunk.length > 1 << 20) {
      if (!out.write(chunk)) await once(out, 'drain');
      chunk = '';
    }
  }
  out.end(chunk);
  await once(out, 'finish');
}

// Before the fix, a stop was seen only when the first batch of changes was written: after
// both sides were read and sorted, some 10 s on this input. 5 s is generous on a busy machine.
const DEADLINE_MS = 5_000;

describe('sgq diff and signals', () => {
  const dir = tempDir('sgq-diff-signals-');
  const [older, newer] = [join(dir, 'old.ndjson'), join(dir, 'new.ndjson')];
  beforeAll(async () => {
    await Promise.all([writeExport(older, 0), writeExport(newer, 7)]);
  }, 60_000);

  /** Starts the diff with what it spills in a folder of its own, so the test sees it come and go. */
  function start() {
    const tmp = tempDir('sgq-diff-tmp-');
    const child = sgq(['diff', older, newer], { env: { TMPDIR: tmp }, timeout: 120_000 });
    let stdout = 0;
    child.stdout!.on('data', (c: Buffer) => (stdout += c.length));
    return { child, tmp, written: () => stdout };
  }

  async function stopWithin(run: ReturnType<typeof start>, signal: 'SIGTERM' | 'SIGINT') {
    const sent = Date.now();
    run.child.kill(signal);
    const r = await run.child;
    return { r, ms: Date.now() - sent };
  }

  it('SIGTERM while reading: exit 143 at once, spilled partitions removed', async () => {
    const run = start();
    // A partition on disk: the first side is being read and split by the hash of its keys.
    await waitFor(() => readdirSync(run.tmp).some((f) => f.startsWith('.diff.part.')), 'a spilled partition', 60_000);
    const { r, ms } = await stopWithin(run, 'SIGTERM');
    expect(r.exitCode, r.stderr).toBe(143);
    expect(ms).toBeLessThan(DEADLINE_MS);
    expect(r.stderr).toContain('interrupted by SIGTERM');
    expect(readdirSync(run.tmp)).toEqual([]);
  }, 120_000);

  it('SIGINT while writing changes: exit 130 at once', async () => {
    const run = start();
    // Changes on stdout: both sides are joined and their changes, in key order, are being written.
    await waitFor(() => run.written() > 0, 'the first changes', 100_000);
    const { r, ms } = await stopWithin(run, 'SIGINT');
    expect(r.exitCode, r.stderr).toBe(130);
    expect(ms).toBeLessThan(DEADLINE_MS);
    expect(readdirSync(run.tmp)).toEqual([]);
  }, 120_000);
});

describe('sgq diff and long lines', () => {
  it('refuses a 50 MB line with a message, quickly and in a 64 MiB heap', async () => {
    const dir = tempDir('sgq-diff-long-');
    const [small, long] = [join(dir, 'small.ndjson'), join(dir, 'long.ndjson')];
    writeFileSync(small, '{"username":"a"}\n');
    writeFileSync(long, `{"username":"a"}\n{"username":"b","bio":"${'x'.repeat(50 * 1024 * 1024)}"}\n`);
    // Before the fix, joining the rest of the line to every chunk made this quadratic: minutes.
    const r = await sgq(['diff', small, long], { nodeFlags: ['--max-old-space-size=64'], timeout: 60_000 });
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toBe(`sgq: ${long}: line 2 is longer than 4,194,304 characters, the most sgq reads; sgq diff reads exports of records, one a line`);
  }, 90_000);

  it('reads lines that span many chunks, as they were', async () => {
    const dir = tempDir('sgq-diff-long-');
    const [older, newer] = [join(dir, 'a.ndjson'), join(dir, 'b.ndjson')];
    const bio = 'y'.repeat(300_000);
    writeFileSync(older, `{"username":"a"}\r\n`);
    writeFileSync(newer, `{"username":"a"}\n{"username":"b","bio":"${bio}"}\r\n\n{"username":"c"}`);
    const r = await sgq(['diff', older, newer]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, string>)).toEqual([
      { change: 'gained', username: 'b', bio },
      { change: 'gained', username: 'c' },
    ]);
  });
});

describe('sgq diff and what killed runs left in the temp folder', () => {
  it("removes this host's spill of runs that are gone, and nothing of a live run or of another host", async () => {
    const tmp = tempDir('sgq-diff-left-');
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    const name = (pid: number, host: string) => `.sort.run.sgq-${pid}-0123abcd-${host}.tmp`;
    const [gone, live, elsewhere] = [name(dead, hostTag()), name(process.pid, hostTag()), name(dead, 'ffffffff' === hostTag() ? 'eeeeeeee' : 'ffffffff')];
    for (const file of [gone, live, elsewhere, 'unrelated.tmp']) writeFileSync(join(tmp, file), 'x');
    const [older, newer] = [join(tmp, 'a.ndjson'), join(tmp, 'b.ndjson')];
    writeFileSync(older, '{"username":"a"}\n');
    writeFileSync(newer, '{"username":"b"}\n');
    const r = await sgq(['diff', older, newer], { env: { TMPDIR: tmp } });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(readdirSync(tmp).sort()).toEqual([live, elsewhere, 'a.ndjson', 'b.ndjson', 'unrelated.tmp'].sort());
  });
});
