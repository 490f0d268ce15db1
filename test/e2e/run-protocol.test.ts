import { execa, execaSync } from 'execa';
import { spawn } from 'node:child_process';
import { openSync, closeSync, readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, sgq } from '../helpers/e2e.js';
import { lines, tempDir, marksIn } from '../helpers/run.js';
import { envelope, useStubs, type Recorded } from '../helpers/stub-server.js';
import { until } from '../helpers/wait.js';
import { onLinuxAsRoot, useTmpfs } from '../helpers/tmpfs.js';

// Issue 18: the run protocol. Each test attacks the one rule (nothing that claims data was
// kept advances before that data is durable; a failure leaves every checkpoint where it
// was) from a side an outside attack found open in 2.1.0, with the real binary.

const stubs = useStubs();
const hasFaketime = execaSync('sh', ['-c', 'command -v faketime'], { reject: false }).exitCode === 0;
const PAGE = 3;

/** A followers route over lists the test changes between runs: pages of 3. */
async function followers(lists: Record<string, string[]>, hold?: (req: Recorded) => Promise<void>, size = PAGE) {
  return stubs(async (req) => {
    await hold?.(req);
    const { user, page = 1 } = JSON.parse(req.body) as { user: string; page?: number };
    const all = (lists[user] ?? []).map((username) => ({ username, last_checked: '2026-11-01T00:00:00.000000+00:00' }));
    return { body: envelope(page, page * size < all.length ? page + 1 : null, all.slice((page - 1) * size, page * size), 1000, user) };
  });
}

function env(url: string, extra: Record<string, string> = {}): Record<string, string> {
  return { SGQ_BASE_URL: url, SGQ_API_KEY: 'k', SGQ_RETRIES: '0', XDG_CACHE_HOME: tempDir('sgq-cache-'), ...extra };
}

/** Runs the binary with stdout on an open file (a real file, as `> FILE` gives it), stderr captured. */
function runWithStdoutFile(args: string[], environment: Record<string, string>, file: string): Promise<{ exitCode: number | null; stderr: string }> {
  const fd = openSync(file, 'w');
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...environment }, stdio: ['ignore', fd, 'pipe'] });
  closeSync(fd);
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.on('close', (exitCode) => resolve({ exitCode, stderr })));
}

const marksOf = (file: string): Record<string, string> => marksIn(file);
const sinceSent = (req: Recorded): unknown => (JSON.parse(req.body) as { since?: string }).since;

describe('--since-last marks', () => {
  it('#1: a page served from an older cache entry moves the mark no later than that entry was asked for', async () => {
    const stub = await followers({ jack: ['a', 'b'] });
    const e = env(stub.url);
    const first = join(tempDir(), 'first.json');
    expect((await sgq(['graph', 'followers', 'jack', '--all', '--since-last', '--state', first, '--cache', '1h'], { env: e })).exitCode).toBe(0);
    const firstMark = Date.parse(marksOf(first)['default graph/get_followers username jack']!);
    // A second state file has no mark either, so the same request is answered from the cache.
    const second = join(tempDir(), 'second.json');
    const startedAt = Date.now();
    const r = await sgq(['graph', 'followers', 'jack', '--all', '--since-last', '--state', second, '--cache', '1h', '-v'], { env: e });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(stub.requests).toHaveLength(1);
    const mark = Date.parse(marksOf(second)['default graph/get_followers username jack']!);
    expect(mark, 'the mark claims the run start, after the cached answer was asked').toBeLessThan(startedAt);
    // The cached answer was asked for during the first run, just after its start.
    expect(mark).toBeGreaterThanOrEqual(firstMark);
  });

  it('#4: a mark written by a clock that was ahead is not sent as since; the run says so and fetches everything', async () => {
    const stub = await followers({ jack: ['a', 'b', 'c', 'd'] });
    const state = join(tempDir(), 'marks.json');
    const future = '2099-01-01T00:00:00.000000+00:00';
    writeFileSync(state, JSON.stringify({ marks: { 'default graph/get_followers username jack': future } }));
    const r = await sgq(['graph', 'followers', 'jack', '--all', '--since-last', '--state', state], { env: env(stub.url) });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(stub.requests.map(sinceSent)).toEqual([undefined, undefined]);
    expect(lines(r.stdout)).toHaveLength(4);
    expect(r.stderr).toContain(`jack: the --since-last mark ${future} is later than this run's start`);
    expect(Date.parse(marksOf(state)['default graph/get_followers username jack']!)).toBeLessThanOrEqual(Date.now());
  });
});

describe.runIf(onLinuxAsRoot)('#6: stdout into a file on a full disk (tmpfs)', () => {
  const tmpfs = useTmpfs('64k');

  it('fails with one line and moves no mark, however little room is left', async () => {
    // Large pages: the write that meets the full disk is the run's last, taken in part.
    const names = Array.from({ length: 900 }, (_, i) => `follower_${i}`);
    const stub = await followers({ jack: names }, undefined, 1000);
    for (const room of [4, 30]) {
      execaSync('sh', ['-c', `rm -f ${tmpfs.path}/*; dd if=/dev/zero of=${tmpfs.path}/fill bs=1k count=${64 - room} 2>/dev/null`]);
      const state = join(tempDir(), 'marks.json');
      const out = join(tmpfs.path, 'out.ndjson');
      const r = await runWithStdoutFile(['graph', 'followers', 'jack', '--all', '--since-last', '--state', state], env(stub.url, { SGQ_CONFIG_DIR: tempDir() }), out);
      expect(r.exitCode, `${room} KiB left: ${r.stderr}`).toBe(1);
      expect(r.stderr).toContain('cannot write to stdout: the disk is full (ENOSPC); free some space on it');
      expect(existsSync(state), 'a mark moved over records the disk never took').toBe(false);
    }
  });
});

describe('snapshots', () => {
  const fullDisk = onLinuxAsRoot ? useTmpfs('4k') : { path: '' };
  it('#3: a snapshot store that cannot be written is found before anything is paid for, in one line', async () => {
    const stub = await followers({ jack: ['a'] });
    const file = join(tempDir(), 'a-file');
    writeFileSync(file, '');
    const outDir = tempDir();
    const r = await sgq(['graph', 'followers', 'jack', 'jill', '--all', '--snapshot', '--snapshot-dir', join(file, 'store'), '--out', join(outDir, 'f.ndjson')], { env: env(stub.url) });
    expect(r.exitCode).toBe(1);
    expect(stub.requests).toHaveLength(0);
    expect(readdirSync(outDir), 'the --out temporary file and its lock are gone').toEqual([]);
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^sgq: cannot write the snapshot store .*: a part of its path is not a folder \(ENOTDIR\); check the path .*; nothing was fetched \(--snapshot-dir chooses another store\)$/)]);
    expect(r.stderr).not.toContain('internal error');
  });

  it.runIf(onLinuxAsRoot)('#2: changes that cannot be written leave the snapshot uncommitted; the next run reports the gains', async () => {
    const lists = { jack: ['a', 'b'] };
    const stub = await followers(lists);
    const dir = tempDir();
    const e = env(stub.url, { XDG_DATA_HOME: dir });
    expect((await sgq(['graph', 'followers', 'jack', '--all', '--snapshot'], { env: e })).exitCode).toBe(0);
    lists.jack = ['a', 'b', 'c'];
    execaSync('sh', ['-c', `dd if=/dev/zero of=${fullDisk.path}/fill bs=1k count=4 2>/dev/null`], { reject: false });
    // The changes go to stdout, a file on the full disk.
    const failed = await runWithStdoutFile(['graph', 'followers', 'jack', '--all', '--snapshot', '--changes'], { ...e, SGQ_CONFIG_DIR: tempDir() }, join(fullDisk.path, 'changes.ndjson'));
    expect(failed.exitCode, failed.stderr).toBe(1);
    expect(failed.stderr).toContain('left as they were: the snapshots in');
    const list = await sgq(['snapshots', 'list', '-o', 'ndjson'], { env: e });
    expect(lines(list.stdout)).toHaveLength(1);
    const next = await sgq(['graph', 'followers', 'jack', '--all', '--snapshot', '--changes'], { env: e });
    expect(next.exitCode, next.stderr).toBe(0);
    expect(lines(next.stdout).map((l) => JSON.parse(l) as { change: string; username: string })).toEqual([expect.objectContaining({ change: 'gained', username: 'c' })]);
  });

  it('#7: two overlapping --snapshot --changes runs of one user: the second compares against the first', async () => {
    const lists = { jack: ['a', 'b'] };
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let first = false;
    const stub = await followers(lists, async () => {
      if (!first) return;
      first = false;
      await held;
    });
    const dir = tempDir();
    const e = env(stub.url, { XDG_DATA_HOME: dir });
    expect((await sgq(['graph', 'followers', 'jack', '--all', '--snapshot'], { env: e })).exitCode).toBe(0);
    first = true;
    lists.jack = ['a', 'b', 'c'];
    const a = sgq(['graph', 'followers', 'jack', '--all', '--snapshot', '--changes'], { env: e });
    await until(() => stub.requests.length >= 2, 'the first run to ask for its page');
    let bErr = '';
    const b = execa(process.execPath, [BIN, 'graph', 'followers', 'jack', '--all', '--snapshot', '--changes'], { env: { ...e, SGQ_CONFIG_DIR: tempDir() }, reject: false });
    b.stderr!.on('data', (c: Buffer) => (bErr += c.toString()));
    await until(() => bErr.includes('waiting for the snapshot store'), 'the second run to wait for the first').catch((error: Error) => {
      throw new Error(`${error.message}; its stderr: ${bErr}; requests: ${stub.requests.length}`);
    });
    expect(stub.requests, 'the second run asked nothing while the first held the user').toHaveLength(2);
    release();
    const [ra, rb] = await Promise.all([a, b]);
    expect(ra.exitCode, ra.stderr).toBe(0);
    expect(rb.exitCode, rb.stderr).toBe(0);
    const gains = [...lines(ra.stdout), ...lines(rb.stdout)].map((l) => JSON.parse(l) as { change: string; username: string });
    expect(gains, 'the gain of c is reported once').toEqual([expect.objectContaining({ change: 'gained', username: 'c' })]);
  });
});

describe('--cache', () => {
  it('#9: an answer sgq rejected is not kept: the rerun asks again', async () => {
    const stub = await stubs(() => ({ body: envelope(1, 1, [{ username: 'a' }]) }));
    const e = env(stub.url);
    for (let run = 1; run <= 2; run++) {
      const r = await sgq(['graph', 'followers', 'jack', '--all', '--cache', '1h'], { env: e });
      expect(r.exitCode).toBe(7);
      expect(r.stderr).toContain('next_page 1 does not move past page 1');
    }
    expect(stub.requests).toHaveLength(2);
  });

  it.runIf(hasFaketime)('#8: an entry stored while the clock was ahead is a miss, not a hit for as long as the clock is behind', async () => {
    const stub = await followers({ jack: ['a'] });
    const e = env(stub.url);
    const ahead = await execa('faketime', ['-f', '+2d', process.execPath, BIN, 'graph', 'followers', 'jack', '--cache', '1h'], { env: { ...e, SGQ_CONFIG_DIR: tempDir() }, reject: false });
    expect(ahead.exitCode, ahead.stderr).toBe(0);
    expect(stub.requests).toHaveLength(1);
    const now = await sgq(['graph', 'followers', 'jack', '--cache', '1h'], { env: e });
    expect(now.exitCode).toBe(0);
    expect(stub.requests, 'an entry from the future was served').toHaveLength(2);
  });
});

describe('#18: a batch that stops', () => {
  it('says how many users were not tried and where their list is', async () => {
    const stub = await stubs(() => ({ status: 503, body: { message: 'down for maintenance' } }));
    const users = Array.from({ length: 50 }, (_, i) => `user${i}`);
    const out = join(tempDir(), 'f.ndjson');
    const r = await sgq(['graph', 'followers', '-', '--out', out, '--concurrency', '1'], { env: env(stub.url), input: users.join('\n') });
    expect(r.exitCode).toBe(7);
    expect(r.stderr).toContain(`the service is unreachable: stopped after 3 users failed in a row; 3 users failed, 47 were not attempted; their list is in ${out}.remaining; resume them with:`);
    expect(readFileSync(`${out}.remaining`, 'utf8').split('\n').filter(Boolean)).toHaveLength(50);
  });
});


describe('one output pipeline', () => {
  it('sgq fmt and sgq diff take --out as route commands do: locked, and --wait-lock waits for the holder', async () => {
    const dir = tempDir();
    const records = join(dir, 'records.ndjson');
    writeFileSync(records, '{"username":"a"}\n{"username":"b"}\n');
    const out = join(dir, 'out.csv');
    // The first holds --out while it reads a stdin that stays open.
    const first = execa(process.execPath, [BIN, 'fmt', '-', '-o', 'csv', '--out', out], { env: { SGQ_CONFIG_DIR: tempDir() }, reject: false });
    await until(() => existsSync(`${out}.lock`), 'the first to lock --out');
    const busy = await sgq(['fmt', records, '-o', 'csv', '--out', out]);
    expect(busy.exitCode).toBe(8);
    expect(busy.stderr).toContain(`--out ${out}`);
    let waitErr = '';
    const waiting = execa(process.execPath, [BIN, 'diff', records, records, '--out', out, '--wait-lock', '30s'], { env: { SGQ_CONFIG_DIR: tempDir() }, reject: false });
    waiting.stderr!.on('data', (c: Buffer) => (waitErr += c.toString()));
    await until(() => waitErr.includes('waiting for --out'), 'the second to wait for the lock');
    first.stdin!.end('{"username":"c"}\n');
    expect((await first).exitCode).toBe(0);
    const second = await waiting;
    expect(second.exitCode, second.stderr).toBe(0);
    expect(readFileSync(out, 'utf8'), 'the diff of a file with itself has no changes').toBe('');
  });
});

describe('many locks at once', () => {
  it('a --snapshot run over many users holds a lock per user with one heartbeat and one exit hook: no listener warning', async () => {
    const users = Array.from({ length: 30 }, (_, i) => `u${i}_3`);
    const r = await sgq(['--sandbox', 'graph', 'followers', '-', '--all', '--snapshot', '--out', join(tempDir(), 'f.ndjson')], { env: { XDG_DATA_HOME: tempDir() }, input: users.join('\n') });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('MaxListenersExceededWarning');
  });

  it('holds no open file per staged user until the output is kept: 300 users under a limit of 128 open files', async () => {
    const users = Array.from({ length: 300 }, (_, i) => `u${i}_3`).join('\n');
    const env = { ...process.env, SGQ_CONFIG_DIR: tempDir(), XDG_DATA_HOME: tempDir() } as Record<string, string>;
    const run = (extra: string[]) =>
      execa('sh', ['-c', 'ulimit -n 128 && exec "$0" "$@"', process.execPath, BIN, '--sandbox', 'graph', 'followers', '-', '--all', '--snapshot', ...extra, '--out', join(tempDir(), 'f.ndjson')], { env, input: users, reject: false });
    for (const extra of [[], ['--changes']]) {
      const r = await run(extra);
      expect(r.exitCode, r.stderr.slice(-500)).toBe(0);
    }
  });
});
