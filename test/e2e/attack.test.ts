import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, sgq } from '../helpers/e2e.js';
import { tempDir, serviceFolderIn, marksIn } from '../helpers/run.js';
import { envelope, useStubs, type Recorded } from '../helpers/stub-server.js';
import { until } from '../helpers/wait.js';
import { hostTag } from '../../src/fs/temp-names.js';
import { execa, execaSync } from 'execa';

// An outside attack on the run protocol of issue 18 (one commit rule for everything a run
// claims): each test is a way found to make a checkpoint claim more than the output holds.

const stubs = useStubs();
const PAGE = 3;
const KEY = (user: string) => `default graph/get_followers username ${user}`;

/** A followers route: every user has 3 followers on one page; `hold` may delay an answer. */
async function followers(hold?: (req: Recorded, user: string) => Promise<void>) {
  return stubs(async (req) => {
    const { user, page = 1 } = JSON.parse(req.body) as { user: string; page?: number };
    await hold?.(req, user);
    const all = [0, 1, 2].map((i) => ({ username: `${user}_f${i}`, last_checked: '2026-11-01T00:00:00.000000+00:00' }));
    return { body: envelope(page, null, all.slice((page - 1) * PAGE, page * PAGE), 1000, user) };
  });
}

function env(url: string, extra: Record<string, string> = {}): Record<string, string> {
  return { SGQ_BASE_URL: url, SGQ_API_KEY: 'k', SGQ_RETRIES: '0', XDG_CACHE_HOME: tempDir('sgq-cache-'), SGQ_CONFIG_DIR: tempDir(), ...extra };
}

const marksOf = (file: string): Record<string, string> =>
  marksIn(file);

/** Starts the binary with stdin from `input`, stdout on a regular file (as `> FILE`), stderr captured. */
function start(args: string[], environment: Record<string, string>, input: string, stdoutFile: string) {
  const fd = openSync(stdoutFile, 'w');
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...environment }, stdio: ['pipe', fd, 'pipe'] });
  closeSync(fd);
  child.stdin!.end(input);
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  return { child, done, stderr: () => stderr };
}

describe('formats that hold records until the end (a table, --jq --slurp, Parquet)', () => {
  it('--jq --slurp failing at the end moves no --since-last mark: nothing was written', async () => {
    const stub = await followers();
    const state = join(tempDir(), 'marks.json');
    const r = await sgq(['graph', 'followers', '-', '--all', '--since-last', '--state', state, '--jq', 'error("boom")', '--slurp'], { env: env(stub.url), input: 'a\nb\nc\n' });
    expect(r.exitCode, r.stderr).toBe(1);
    expect(r.stdout).toBe('');
    expect(marksOf(state), 'marks claim records that never left sgq').toEqual({});
    expect(r.stderr).toContain('left as they were: the --since-last marks');
  });

  for (const format of [['-o', 'table'], ['-o', 'table', '--fields', 'username'], ['--jq', '.', '--slurp']]) {
    it(`${format.join(' ')} into stdout: killed mid-run (kill -9), no mark claims records still held in memory`, async () => {
      const begun = Date.now();
      let releaseLast!: () => void;
      const last = new Promise<void>((resolve) => (releaseLast = resolve));
      // The service is slow: the third user ends more than a second into the run (when a
      // streaming commit is due); the fourth is held until the run is killed.
      const stub = await followers(async (_req, user) => {
        if (user === 'c') await new Promise((r) => setTimeout(r, Math.max(0, begun + 1300 - Date.now())));
        if (user === 'd') await last;
      });
      const dir = tempDir();
      const state = join(dir, 'marks.json');
      const out = join(dir, 'stdout');
      const run = start(['graph', 'followers', '-', '--all', '--since-last', '--state', state, '--concurrency', '1', ...format], env(stub.url), 'a\nb\nc\nd\n', out);
      try {
        await until(() => stub.requests.some((r) => (JSON.parse(r.body) as { user: string }).user === 'd'), 'the run to ask for the fourth user');
        // Whatever the run would commit after the third user's end, it has done before asking the fourth.
        run.child.kill('SIGKILL');
        expect((await run.done).signal).toBe('SIGKILL');
      } finally {
        releaseLast();
      }
      const written = statSync(out).size;
      const marked = Object.keys(marksOf(state));
      expect({ written, marked }, 'marks moved for users none of whose records reached stdout').toEqual({ written: 0, marked: [] });
    });
  }

  it('a table with --since-last still commits the marks at the end of a complete run', async () => {
    const stub = await followers();
    const state = join(tempDir(), 'marks.json');
    const r = await sgq(['graph', 'followers', '-', '--all', '--since-last', '--state', state, '-o', 'table'], { env: env(stub.url), input: 'a\nb\n' });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(Object.keys(marksOf(state)).sort()).toEqual([KEY('a'), KEY('b')]);
  });
});

describe('--snapshot --changes with users in flight at once', () => {
  it('a snapshot is not committed by another user\'s end before its own changes are written', async () => {
    const users = Array.from({ length: 24 }, (_, i) => `u${i}`);
    let gained = false;
    // Every user has a and b; from the second run on, also c. A little latency lets users overlap.
    const stub = await stubs(async (req) => {
      const { user, page = 1 } = JSON.parse(req.body) as { user: string; page?: number };
      // A service answering in 0 to 15 ms: users overlap and end in any order.
      await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 16)));
      const names = [...(gained ? ['c'] : []), ...Array.from({ length: 8 }, (_, i) => `f${i}`)];
      return { body: envelope(page, page * PAGE < names.length ? page + 1 : null, names.slice((page - 1) * PAGE, page * PAGE).map((username) => ({ username })), 1000, user) };
    });
    const e = env(stub.url, { XDG_DATA_HOME: tempDir() });
    const input = `${users.join('\n')}\n`;
    const first = await sgq(['graph', 'followers', '-', '--all', '--snapshot', '--concurrency', '4'], { env: e, input });
    expect(first.exitCode, first.stderr).toBe(0);
    gained = true;
    const second = await sgq(['graph', 'followers', '-', '--all', '--snapshot', '--changes', '--concurrency', '4'], { env: e, input });
    expect(second.stderr).not.toContain('internal error');
    expect(second.exitCode, second.stderr).toBe(0);
    const reported = second.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { query_user: string }).query_user).sort();
    expect(reported, 'every user reports its gain once').toEqual([...users].sort());
  });
});

describe('what a killed --snapshot run leaves', () => {
  it('the next --snapshot run of the user sweeps the staged files of dead runs from its folder', async () => {
    const stub = await followers();
    const data = tempDir();
    const e = env(stub.url, { XDG_DATA_HOME: data });
    expect((await sgq(['graph', 'followers', 'jack', '--all', '--snapshot'], { env: e })).exitCode).toBe(0);
    const folder = join(serviceFolderIn(join(data, 'sgq', 'snapshots')), 'default', 'graph.get_followers', 'username', 'jack');
    // A pid that is surely gone: a process that has exited.
    const dead = execaSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout;
    const leftover = `.2026-01-01T00-00-00.000Z-abcdef.ndjson.gz.sgq-${dead}-0badf00d-${hostTag()}.tmp`;
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, leftover), 'a whole staged export, flushed, never committed');
    const r = await sgq(['graph', 'followers', 'jack', '--all', '--snapshot'], { env: e });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(readdirSync(folder)).not.toContain(leftover);
  });
});

const hasFaketime = execaSync('sh', ['-c', 'command -v faketime'], { reject: false }).exitCode === 0;

describe.runIf(hasFaketime)('a snapshot taken while the clock was ahead', () => {
  /** Runs the binary under faketime (a clock `offset` ahead). */
  const ahead = (offset: string, args: string[], environment: Record<string, string>) =>
    execa('faketime', ['-f', offset, process.execPath, BIN, ...args], { env: environment, reject: false, timeout: 30_000 });

  async function setup() {
    const lists: Record<string, string[]> = { jack: ['a', 'b'] };
    const stub = await stubs((req) => {
      const { user } = JSON.parse(req.body) as { user: string };
      return { body: envelope(1, null, (lists[user] ?? []).map((username) => ({ username })), 1000, user) };
    });
    const e = env(stub.url, { XDG_DATA_HOME: tempDir() });
    const snap = ['graph', 'followers', 'jack', '--all', '--snapshot', '--changes'];
    expect((await sgq(snap, { env: e })).exitCode).toBe(0);
    lists.jack = ['a', 'b', 'c'];
    const future = await ahead('+2d', snap, { ...process.env, ...e } as Record<string, string>);
    expect(future.exitCode, future.stderr).toBe(0);
    expect(future.stdout, 'the run with the clock ahead reports the gain of c').toContain('"username":"c"');
    return { e, snap, lists };
  }

  it('the next run compares against it (the last one kept), not against the one before: c is not reported twice', async () => {
    const { e, snap } = await setup();
    const next = await sgq(snap, { env: e });
    expect(next.exitCode, next.stderr).toBe(0);
    expect(next.stdout, 'c was reported by the run before').toBe('');
    expect(next.stderr).toContain('a clock was ahead; the changes are against it all the same');
  });

  it('a prune keeps the snapshots taken after it, not only the one with the latest clock reading', async () => {
    const { e, snap, lists } = await setup();
    lists.jack = ['a', 'b', 'c', 'd'];
    expect((await sgq(snap, { env: e })).exitCode).toBe(0);
    expect((await sgq(['snapshots', 'prune', '--keep', '1'], { env: e })).exitCode).toBe(0);
    const kept = (await sgq(['snapshots', 'list', '-o', 'ndjson'], { env: e })).stdout.trim().split('\n').map((l) => (JSON.parse(l) as { records: number }).records);
    expect(kept, 'the newest snapshot (4 followers) is kept').toEqual([4]);
  });
});

describe.runIf(process.platform === 'linux' && process.getuid?.() === 0)('a lock on a full disk (tmpfs)', () => {
  it('a run that cannot create its lock leaves no temporary file behind', async () => {
    const stub = await followers();
    const disk = tempDir();
    execaSync('mount', ['-t', 'tmpfs', '-o', 'size=16k', 'tmpfs', disk]);
    try {
      execaSync('sh', ['-c', `dd if=/dev/zero of=${disk}/fill bs=1k count=16 2>/dev/null`], { reject: false });
      for (let run = 0; run < 2; run++) {
        const r = await sgq(['graph', 'followers', 'jack', '--all', '--since-last', '--state', join(disk, 'marks.json')], { env: env(stub.url) });
        expect(r.exitCode).not.toBe(0);
        expect(r.stderr).toContain('ENOSPC');
      }
      expect(readdirSync(disk)).toEqual(['fill']);
    } finally {
      execaSync('umount', [disk], { reject: false });
    }
  });
});
