import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { sgq, useSandboxProcess } from '../helpers/e2e.js';
import { tempDir, serviceFolderIn } from '../helpers/run.js';

// The stops and the memory bound on the spec's small records (the service's shape is ten
// times larger a record, which says nothing more about either).
const sb = useSandboxProcess(['--shape', 'spec']);

// Concurrent snapshots and their diff, in both shapes: the spec's keyed on `username`, the
// service's on `follower_userid` (where the summary counts renames too).
describe.each(['spec', 'service'] as const)('snapshots of the %s shape, end to end', (shape) => {
  const shaped = useSandboxProcess(['--shape', shape]);
  it('concurrent runs for one user each store a whole snapshot and leave no temporary file or lock', async () => {
    const dir = tempDir('sgq-snaps-');
    const runs = await Promise.all(
      Array.from({ length: 4 }, () => sgq(['graph', 'followers', 'busy_2600', '--all', '--snapshot', '--snapshot-dir', dir, '--concurrency', '1', '--quiet'], { env: shaped.env() })),
    );
    for (const r of runs) expect(r.exitCode, r.stderr).toBe(0);
    const list = await sgq(['snapshots', 'list', '--snapshot-dir', dir, '-o', 'json'], { env: shaped.env() });
    const snapshots = JSON.parse(list.stdout) as { records: number; file: string; complete: boolean }[];
    expect(snapshots).toHaveLength(4);
    for (const s of snapshots) {
      expect(s.records).toBe(2600);
      expect(s.complete).toBe(true);
      expect(gunzipSync(readFileSync(s.file)).toString().split('\n').filter(Boolean)).toHaveLength(2600);
    }
    const folder = join(serviceFolderIn(dir), 'default', 'graph.get_followers', 'username', 'busy_2600');
    // The one file of a folder's own besides its snapshots: the hint naming the last (last-committed.ts).
    expect(readdirSync(folder).filter((name) => name.startsWith('.') && name !== '.last-snapshot')).toEqual([]);
    const diff = await sgq(['diff', 'busy_2600', '--snapshot-dir', dir], { env: shaped.env() });
    expect(diff.exitCode).toBe(0);
    expect(diff.stdout).toBe('');
    expect(diff.stderr).toMatch(shape === 'spec' ? /0 gained, 0 lost, 2,600 unchanged/ : /0 gained, 0 lost, 0 renamed, 2,600 unchanged/);
  }, 60_000);
});

describe('snapshots, end to end', () => {
  it('a run stopped by SIGTERM stores nothing', async () => {
    const dir = tempDir('sgq-snaps-');
    const slow = useSlow();
    const child = sgq(['graph', 'followers', 'slow_5000', '--all', '--snapshot', '--snapshot-dir', dir], { env: { ...sb.env(), SGQ_BASE_URL: slow } });
    let seen = '';
    await new Promise<void>((resolve) => {
      child.stdout!.on('data', (c: Buffer) => {
        seen += c.toString();
        if (seen.includes('\n')) resolve();
      });
    });
    child.kill('SIGTERM');
    const r = await child;
    expect(r.exitCode).toBe(143);
    expect(r.stderr).toMatch(/not stored as a snapshot/);
    expect((await sgq(['snapshots', 'list', '--snapshot-dir', dir])).stdout).toBe('');
  }, 60_000);

  it('diffs and snapshots in bounded memory: 300,000 records a side fit a 24 MiB heap, which holding them does not', async () => {
    const dir = tempDir('sgq-snaps-');
    const files = tempDir();
    // Each step runs in 16-20 MiB on Node 20 to 26 (under load too); sgq 5.3.11 sized its bounds from V8's
    // heap limit, young generation included, and its diff of two files ran out of 24 MiB in most runs, of 32 in some.
    const heap = { nodeFlags: ['--max-old-space-size=24'], timeout: 120_000 };
    // Two snapshots (sorted while captured: spilled to disk), then a streaming diff.
    for (let i = 0; i < 2; i++) {
      const r = await sgq(['graph', 'followers', 'big_300000', '--all', '--snapshot', '--snapshot-dir', dir, '-q'], { env: sb.env(), ...heap });
      expect(r.exitCode, r.stderr.slice(0, 300)).toBe(0);
    }
    const same = await sgq(['diff', 'big_300000', '--snapshot-dir', dir], { env: sb.env(), ...heap });
    expect(same.exitCode, same.stderr.slice(0, 300)).toBe(0);
    expect(same.stderr).toMatch(/0 gained, 0 lost, 300,000 unchanged/);
    // Two exports of different accounts, diffed as files: sorted on disk in bounded runs.
    for (const name of ['big_300000', 'other_300000']) {
      const r = await sgq(['graph', 'followers', name, '--all', '--out', join(files, `${name}.ndjson`), '-q'], { env: sb.env() });
      expect(r.exitCode).toBe(0);
    }
    const args = ['diff', join(files, 'big_300000.ndjson'), join(files, 'other_300000.ndjson')];
    const different = await sgq([...args, '-o', 'csv', '--fields', 'change'], { ...heap, env: { TMPDIR: tempDir() } });
    expect(different.exitCode, different.stderr.slice(0, 300)).toBe(0);
    expect(different.stderr).toMatch(/300,000 gained, 300,000 lost, 0 unchanged/);
    expect(different.stdout.split('\r\n').filter(Boolean)).toHaveLength(600_001);
    // The control: a table holds every change, and 600,000 of them do not fit.
    // It dies out of memory with its spill on disk: in a folder of its own, not the machine's /tmp.
    const table = await sgq([...args, '-o', 'table'], { ...heap, env: { TMPDIR: tempDir() } });
    expect(table.exitCode).not.toBe(0);
    expect(table.stderr).toMatch(/heap/i);
  }, 300_000);
});

/** The sandbox's address with 200 ms of latency per answer: a sandbox process of its own. */
function useSlow(): string {
  return slowSandbox.url;
}
const slowSandbox = useSandboxProcess(['--latency-ms', '200', '--shape', 'spec']);
