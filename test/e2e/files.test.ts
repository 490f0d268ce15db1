import { execa, execaSync } from 'execa';
import {
  chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, sgq, useSandboxProcess } from '../helpers/e2e.js';
import { lines, tempDir, marksIn } from '../helpers/run.js';
import { onLinuxAsRoot, useTmpfs } from '../helpers/tmpfs.js';
import { until } from '../helpers/wait.js';
import { hostTag } from '../../src/fs/temp-names.js';

// The file invariants of the README's "What sgq guarantees", attacked with real processes,
// real files, a real full disk (tmpfs), FIFOs, links, locks and kill -9.

const FAR_CLOCK = ['--clock', '2100-01-01T00:00:00Z']; // every follower is newer than any mark

/** A pid that belonged to a process that has exited. */
function deadPid(): number {
  return Number(execaSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout);
}

const errLines = (stderr: string) => lines(stderr);

describe('--out against what it points at', () => {
  const sb = useSandboxProcess();
  const slow = useSandboxProcess(['--latency-ms', '40']);

  it('replaces the target of a symbolic link and leaves the link a link', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'target.ndjson'), 'old\n');
    const before = statSync(join(dir, 'target.ndjson')).ino;
    symlinkSync('target.ndjson', join(dir, 'link.ndjson'));
    const r = await sgq(['graph', 'followers', 'big_700', '--all', '--out', join(dir, 'link.ndjson')], { env: sb.env() });
    expect(r.exitCode).toBe(0);
    expect(lstatSync(join(dir, 'link.ndjson')).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(dir, 'link.ndjson'))).toBe('target.ndjson');
    expect(lines(readFileSync(join(dir, 'target.ndjson'), 'utf8'))).toHaveLength(700);
    // Replaced by a rename (a new inode), not rewritten in place.
    expect(statSync(join(dir, 'target.ndjson')).ino).not.toBe(before);
    expect(readdirSync(dir).sort()).toEqual(['link.ndjson', 'target.ndjson']);
  });

  it('writes through a device and a FIFO, never replacing them', async () => {
    // A private null device (not /dev/null itself: a regression would replace the machine's).
    if (onLinuxAsRoot) {
      const devices = tempDir();
      const device = join(devices, 'null');
      execaSync('mknod', ['-m', '666', device, 'c', '1', '3']);
      expect((await sgq(['graph', 'followers', 'big_700', '--all', '--out', device], { env: sb.env() })).exitCode).toBe(0);
      expect(lstatSync(device).isCharacterDevice()).toBe(true);
      expect(readdirSync(devices)).toEqual(['null']);
    }
    const dir = tempDir();
    const fifo = join(dir, 'pipe');
    execaSync('mkfifo', [fifo]);
    const reader = execa('cat', [fifo], { reject: false });
    const r = await sgq(['graph', 'followers', 'big_1200', '--all', '--out', fifo], { env: sb.env() });
    expect(r.exitCode).toBe(0);
    expect(lines((await reader).stdout)).toHaveLength(1200);
    expect(lstatSync(fifo).isFIFO()).toBe(true);
    expect(readdirSync(dir)).toEqual(['pipe']);
  });

  it('fails with one line when the reader of a FIFO or a process substitution goes away', async () => {
    const dir = tempDir();
    const fifo = join(dir, 'pipe');
    execaSync('mkfifo', [fifo]);
    const reader = execa('head', ['-c', '100', fifo], { reject: false });
    const r = await sgq(['graph', 'followers', 'big_30000', '--all', '--out', fifo], { env: sb.env() });
    await reader;
    expect(r.exitCode).toBe(1);
    expect(errLines(r.stderr)).toHaveLength(1);
    expect(r.stderr).toMatch(/^sgq: cannot write to .*pipe: its reader closed it \(EPIPE\)/);

    const command = `exec '${process.execPath}' '${BIN}' graph followers big_30000 --all --out >(head -c 100 >/dev/null)`;
    const sub = await execa('bash', ['-c', command], { env: sb.env(), reject: false, timeout: 30_000 });
    expect(sub.exitCode).toBe(1);
    expect(errLines(sub.stderr)).toHaveLength(1);
    expect(sub.stderr).toContain('EPIPE');
  });

  it('keeps the mode of an existing file, and no temporary or .partial file is more readable', async () => {
    const dir = tempDir();
    const file = join(dir, 'secret.ndjson');
    writeFileSync(file, 'old\n');
    chmodSync(file, 0o600);
    const run = sgq(['graph', 'followers', 'slow_3000', '--all', '--out', file], { env: slow.env() });
    let tempMode: number | undefined;
    await until(() => {
      // The data's temporary file, not the lock's (`.secret.ndjson.lock.sgq-….tmp`, readable by all by design, for a moment).
      const temp = readdirSync(dir).find((n) => n.startsWith('.secret.ndjson.sgq-') && n.endsWith('.tmp'));
      if (temp) tempMode = statSync(join(dir, temp)).mode & 0o777;
      return tempMode !== undefined || run.exitCode !== null;
    }, 'the temporary file');
    expect((await run).exitCode).toBe(0);
    expect(tempMode).toBe(0o600);
    expect(statSync(file).mode & 0o777).toBe(0o600);

    // A failed run (one user has no data): the partial file is no more readable than FILE.
    const failed = await sgq(['graph', 'followers', 'big_700', 'nobody', '--all', '--out', file, '--concurrency', '1'], { env: sb.env() });
    expect(failed.exitCode).toBe(4);
    expect(statSync(`${file}.partial`).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).not.toBe('old\n');
  });

  it('is not stopped by temporary files a killed run left, and removes them', async () => {
    const dir = tempDir();
    const file = join(dir, 'f.ndjson');
    const dead = deadPid();
    // sgq 1.0's name, 2.1's and this version's, for a process that is gone.
    const names = [`.f.ndjson.${dead}.tmp`, `.f.ndjson.${dead}.0badf00d.tmp`, `.f.ndjson.sgq-${dead}-0badf00d-${hostTag()}.tmp`, `.f.ndjson.${process.pid}.tmp`];
    for (const name of names) writeFileSync(join(dir, name), 'half a li');
    const r = await sgq(['graph', 'followers', 'big_700', '--all', '--out', file], { env: sb.env() });
    expect(r.exitCode).toBe(0);
    expect(lines(readFileSync(file, 'utf8'))).toHaveLength(700);
    // The dead run's temporary files of 2.1 and this version are gone; one of a live pid is left alone.
    expect(readdirSync(dir).sort()).toEqual([`.f.ndjson.${dead}.tmp`, `.f.ndjson.${process.pid}.tmp`, 'f.ndjson'].sort());
  });
});

describe.runIf(onLinuxAsRoot)('a full disk (tmpfs)', () => {
  const sb = useSandboxProcess(FAR_CLOCK);
  const tmpfs = useTmpfs('64k');

  it('exits 1 with one line, keeps the old FILE and what was written in FILE.partial, and moves no mark', async () => {
    const file = join(tmpfs.path, 'f.ndjson');
    writeFileSync(file, 'old\n');
    const state = join(tempDir(), 'marks.json');
    const r = await sgq(['graph', 'followers', 'big_5000', '--all', '--out', file, '--since-last', '--state', state], { env: sb.env() });
    expect(r.exitCode).toBe(1);
    expect(errLines(r.stderr)).toHaveLength(1);
    expect(r.stderr).toMatch(/cannot write to .*f\.ndjson: the disk is full \(ENOSPC\); .*f\.ndjson left unchanged; the records written before the failure are in .*f\.ndjson\.partial; free some space on it; nothing more was fetched$/m);
    expect(readFileSync(file, 'utf8')).toBe('old\n');
    const kept = readFileSync(`${file}.partial`, 'utf8');
    expect(kept.endsWith('\n')).toBe(true);
    for (const line of lines(kept)) expect(JSON.parse(line)).toHaveProperty('follower_username');
    expect(readdirSync(tmpfs.path).sort()).toEqual(['f.ndjson', 'f.ndjson.partial']);
    expect(existsSync(state)).toBe(false);
  });

  it('says honestly that the records are lost when even FILE.partial cannot be kept', async () => {
    rmSync(join(tmpfs.path, 'f.ndjson.partial'), { force: true });
    const file = join(tmpfs.path, 'g.ndjson');
    mkdirSync(`${file}.partial`); // a name that cannot be replaced by a file
    const r = await sgq(['graph', 'followers', 'big_5000', '--all', '--out', file], { env: sb.env() });
    expect(r.exitCode).toBe(1);
    expect(errLines(r.stderr)).toHaveLength(1);
    expect(r.stderr).toMatch(/\(ENOSPC\); .*g\.ndjson not created; the records fetched could not be kept in .*g\.ndjson\.partial \(\w+\) and are lost/);
    expect(readdirSync(tmpfs.path).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });
});

describe('locks: no silent overlap', () => {
  const slow = useSandboxProcess(['--latency-ms', '40']);

  it('a second run on the same --out exits 8 naming the holder; with --wait-lock it waits and succeeds', async () => {
    const dir = tempDir();
    const file = join(dir, 'f.ndjson');
    const first = sgq(['graph', 'followers', 'slow_5000', '--all', '--out', file], { env: slow.env() });
    await until(() => existsSync(`${file}.lock`), 'the first run to take the lock');
    // Stopped while it holds the lock, so the others surely meet it however busy the machine.
    first.kill('SIGSTOP');
    const busy = await sgq(['graph', 'followers', 'big_10', '--out', file], { env: slow.env() });
    expect(busy.exitCode).toBe(8);
    expect(errLines(busy.stderr)).toHaveLength(1);
    expect(busy.stderr).toContain(`pid ${first.pid}`);
    expect(busy.stderr).toContain(`${file}.lock`);
    const waiting = sgq(['graph', 'followers', 'big_10', '--out', file, '--wait-lock', '2m'], { env: slow.env() });
    let told = '';
    waiting.stderr!.on('data', (c: Buffer) => (told += c.toString()));
    await until(() => told.includes(`waiting for --out ${file}, in use by pid ${first.pid}`), 'the second run to wait');
    first.kill('SIGCONT');
    expect((await first).exitCode).toBe(0);
    expect((await waiting).exitCode).toBe(0);
    expect(lines(readFileSync(file, 'utf8'))).toHaveLength(10);
    expect(readdirSync(dir)).toEqual(['f.ndjson']);
  });

  it('--wait-lock gives up at its deadline with exit 8', async () => {
    const dir = tempDir();
    const file = join(dir, 'f.ndjson');
    // A live process that is not sgq holds it: the test runner itself.
    writeFileSync(`${file}.lock`, JSON.stringify({ pid: process.pid, host: hostname() }));
    const r = await sgq(['graph', 'followers', 'big_10', '--out', file, '--wait-lock', '1s'], { env: slow.env() });
    expect(r.exitCode).toBe(8);
    expect(r.stderr).toContain(`pid ${process.pid}`);
    expect(r.stderr).toContain('--wait-lock 1s');
    expect(existsSync(file)).toBe(false);
  });

  it('the same state file is locked too, whatever the --out', async () => {
    const dir = tempDir();
    const state = join(dir, 'marks.json');
    writeFileSync(`${state}.lock`, JSON.stringify({ pid: process.pid, host: hostname() }));
    const r = await sgq(['graph', 'followers', 'big_10', '--since-last', '--state', state], { env: slow.env() });
    expect(r.exitCode).toBe(8);
    expect(r.stderr).toContain(`${state}.lock`);
    expect(r.stdout).toBe('');
  });

  it('takes over a lock left by a dead process, and a lock of a reused pid', async () => {
    const dir = tempDir();
    const file = join(dir, 'f.ndjson');
    const state = join(dir, 'marks.json');
    writeFileSync(`${file}.lock`, JSON.stringify({ pid: deadPid(), host: hostname() }));
    // Our own pid, but with another start time: the process that held it is gone.
    writeFileSync(`${state}.lock`, JSON.stringify({ pid: process.pid, host: hostname(), start: '1' }));
    const r = await sgq(['graph', 'followers', 'big_10', '--out', file, '--since-last', '--state', state], { env: slow.env() });
    expect(r.exitCode).toBe(0);
    expect(readdirSync(dir).sort()).toEqual(['f.ndjson', 'marks.json']);
  });
});

describe('--since-last marks never run ahead of the data', () => {
  const sb = useSandboxProcess(FAR_CLOCK);
  const marksOf = (state: string): string[] => Object.keys(marksIn(state));

  it('with --out, no mark moves when the file is not renamed into place', async () => {
    const dir = tempDir();
    const state = join(dir, 'marks.json');
    const r = await sgq(['graph', 'followers', 'big_700', 'nobody', '--all', '--out', join(dir, 'f.ndjson'), '--since-last', '--state', state, '--concurrency', '1'], { env: sb.env() });
    expect(r.exitCode).toBe(4);
    expect(existsSync(join(dir, 'f.ndjson.partial'))).toBe(true);
    expect(marksOf(state)).toEqual([]);
  });

  it('not when --limit cuts the last page of a user, nor when --max-credits stops it', async () => {
    const dir = tempDir();
    const state = join(dir, 'marks.json');
    expect((await sgq(['graph', 'followers', 'big_10', '--all', '--limit', '5', '--since-last', '--state', state], { env: sb.env() })).exitCode).toBe(0);
    expect((await sgq(['graph', 'followers', 'big_1200', '--all', '--max-credits', '1', '--since-last', '--state', state], { env: sb.env() })).exitCode).toBe(0);
    expect(marksOf(state)).toEqual([]);
    expect((await sgq(['graph', 'followers', 'big_10', '--all', '--limit', '10', '--since-last', '--state', state], { env: sb.env() })).exitCode).toBe(0);
    expect(marksOf(state)).toEqual(['default graph/get_followers username big_10']);
  });
});

describe('crash consistency: kill -9 at random moments', () => {
  const sb = useSandboxProcess([...FAR_CLOCK, '--latency-ms', '5']);
  const USERS = ['a_1000', 'b_1000', 'c_1000'];
  const KILLS = 50;

  it(`after each of ${KILLS} kills, F is old or complete, marks claim no more than F holds, and the next run cleans up`, { timeout: 180_000 }, async () => {
    const dir = tempDir();
    const file = join(dir, 'F.ndjson');
    const state = join(dir, 'marks.json');
    const args = ['graph', 'followers', ...USERS, '--all', '--concurrency', '1', '--out', file, '--since-last', '--state', state];
    const OLD = 'old\n';
    const reference = join(dir, 'ref.ndjson');
    expect((await sgq(['graph', 'followers', ...USERS, '--all', '--concurrency', '1', '--out', reference], { env: sb.env() })).exitCode).toBe(0);
    const REF = readFileSync(reference, 'utf8');
    rmSync(reference);
    expect(lines(REF)).toHaveLength(3000);

    const readState = () => (existsSync(state) ? readFileSync(state, 'utf8') : '');
    const normalRun = async () => {
      const r = await sgq(args, { env: sb.env() });
      expect(r.exitCode, r.stderr).toBe(0);
      expect(readFileSync(file, 'utf8')).toBe(REF);
      expect(readdirSync(dir).sort()).toEqual(['F.ndjson', 'marks.json']);
    };

    let killedMidRun = 0;
    for (let i = 0; i < KILLS; i++) {
      // Fresh old content each time, so that marks moved without the new file would show.
      writeFileSync(file, OLD);
      if (i % 2 === 0) rmSync(state, { force: true });
      const marksBefore = readState();
      // Kill after a random number of lines of --verbose trace (16 in a whole run).
      const killAfter = Math.floor(Math.random() * 17);
      const child = sgq([...args, '-v'], { env: sb.env() });
      let seen = 0;
      const kill = () => child.kill('SIGKILL');
      if (killAfter === 0) kill();
      child.stderr!.on('data', (chunk: Buffer) => {
        seen += chunk.toString().split('\n').length - 1;
        if (seen >= killAfter) kill();
      });
      const result = await child;
      if (result.signal === 'SIGKILL') killedMidRun++;
      else expect(result.exitCode, result.stderr).toBe(0);

      const content = readFileSync(file, 'utf8');
      expect([OLD, REF]).toContain(content);
      if (readState() !== marksBefore) expect(content, `kill ${i}: marks moved, F not replaced`).toBe(REF);
      if (i % 10 === 9) await normalRun();
    }
    await normalRun();
    expect(killedMidRun).toBeGreaterThan(KILLS / 2);
  });
});

describe('the launcher', () => {
  it('exits non-zero with one line if the run never settles', async () => {
    // A stand-in for dist/cli.cjs whose run() returns a promise nothing will ever settle:
    // the event loop empties and Node exits on its own.
    const dir = tempDir();
    const preload = join(dir, 'stall.cjs');
    writeFileSync(preload, `const p = require.resolve(${JSON.stringify(join(BIN, '../../dist/cli.cjs'))});\nrequire.cache[p] = { id: p, filename: p, loaded: true, exports: { run: () => new Promise(() => {}) } };\n`);
    const r = await sgq(['graph', 'followers', 'jack'], { nodeFlags: ['--require', preload] });
    expect(r.exitCode).toBe(1);
    expect(errLines(r.stderr)).toHaveLength(1);
    expect(r.stderr).toMatch(/^sgq: internal error: the run stopped before it finished/);
  });

  /** A preload standing in for dist/cli.cjs: `run` is the body of its run(), `extra` more of the preload. */
  function standIn(run: string, extra = ''): string {
    const preload = join(tempDir(), 'stand-in.cjs');
    writeFileSync(preload, `${extra}\nconst p = require.resolve(${JSON.stringify(join(BIN, '../../dist/cli.cjs'))});\nrequire.cache[p] = { id: p, filename: p, loaded: true, exports: { run: () => { ${run} } } };\n`);
    return preload;
  }

  it('ends once the event loop is empty, with the run\'s code: what is still scheduled when the run settles is done', async () => {
    const preload = standIn("setTimeout(() => process.stdout.write('late\\n'), 30); return Promise.resolve(3);");
    const r = await sgq(['graph', 'followers', 'jack'], { nodeFlags: ['--require', preload] });
    expect(r.exitCode).toBe(3);
    expect(r.stdout).toBe('late');
    expect(r.stderr).toBe('');
  });

  it('leaves the end to Node while another beforeExit listener is there (it may schedule more work)', async () => {
    const more = "let again = false; process.on('beforeExit', () => { if (!again) { again = true; setTimeout(() => process.stdout.write('more\\n'), 10); } });";
    const r = await sgq(['graph', 'followers', 'jack'], { nodeFlags: ['--require', standIn('return Promise.resolve(0);', more)] });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe('more');
  });
});
