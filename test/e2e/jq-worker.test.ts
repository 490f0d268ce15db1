import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { execa } from 'execa';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, sgq } from '../helpers/e2e.js';
import { tempDir, marksIn } from '../helpers/run.js';
import { envelope, useStubs, type Recorded } from '../helpers/stub-server.js';
import { until } from '../helpers/wait.js';
import { STREAMING_COMMIT_MS } from '../../src/cli/run/checkpoint.js';

// --jq in the built binary runs jq in a worker thread (dist/jq-worker.cjs), on batches of
// pages: its results reach stdout after their records were fetched. The run protocol must
// still commit no mark over a record whose results have not reached the output.

const stubs = useStubs();
const KEY = (user: string) => `default graph/get_followers username ${user}`;

/** Every user has 3 followers on one page; `hold` may delay an answer. */
async function followers(hold?: (req: Recorded, user: string) => Promise<void>) {
  return stubs(async (req) => {
    const { user } = JSON.parse(req.body) as { user: string };
    await hold?.(req, user);
    const all = [0, 1, 2].map((i) => ({ username: `${user}_f${i}`, last_checked: '2026-11-01T00:00:00.000000+00:00' }));
    return { body: envelope(1, null, all, 1000, user) };
  });
}

const env = (url: string) => ({ SGQ_BASE_URL: url, SGQ_API_KEY: 'k', SGQ_RETRIES: '0', XDG_CACHE_HOME: tempDir('sgq-cache-'), SGQ_CONFIG_DIR: tempDir() });
/** CPU time a process has used so far (user and system, from /proc). */
const cpuSeconds = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
};
const marksOf = (file: string): Record<string, string> =>
  marksIn(file);

describe('--jq through its worker thread and the run protocol', () => {
  it('killed mid-run (kill -9): every mark that moved covers a user whose results are in stdout', async () => {
    let releaseLast!: () => void;
    const last = new Promise<void>((resolve) => (releaseLast = resolve));
    // A streaming commit falls due at the first job end STREAMING_COMMIT_MS after the run
    // opened its marks: the users after 'a' are answered once that much has passed since the
    // run's first request (so some commit happens mid-run); the last is held until the kill.
    let firstAt: number | undefined;
    const stub = await followers(async (_req, user) => {
      firstAt ??= Date.now();
      if (user === 'e') await last;
      else if (user !== 'a') await until(() => Date.now() - firstAt! > STREAMING_COMMIT_MS, 'the streaming commit to fall due');
    });
    const dir = tempDir();
    const state = join(dir, 'marks.json');
    const out = join(dir, 'stdout');
    const fd = openSync(out, 'w');
    const child = spawn(process.execPath, [BIN, 'graph', 'followers', '-', '--all', '--since-last', '--state', state, '--concurrency', '1', '--jq', '.username'], { env: { ...process.env, ...env(stub.url) }, stdio: ['pipe', fd, 'ignore'] });
    closeSync(fd);
    child.stdin!.end('a\nb\nc\nd\ne\n');
    const done = new Promise((resolve) => child.on('close', (_code, signal) => resolve(signal)));
    try {
      await until(() => stub.requests.some((r) => (JSON.parse(r.body) as { user: string }).user === 'e'), 'the run to ask for the last user');
      child.kill('SIGKILL');
      expect(await done).toBe('SIGKILL');
    } finally {
      releaseLast();
    }
    const written = readFileSync(out, 'utf8');
    const marked = Object.keys(marksOf(state));
    const covered = ['a', 'b', 'c', 'd'].filter((u) => written.includes(`${u}_f2\n`)).map(KEY);
    expect(marked.filter((key) => !covered.includes(key)), 'marks moved over results still with jq').toEqual([]);
    // Results that reached stdout are committed while the run goes on: pending ones never block it for good.
    expect(marked.length, 'no mark was committed during the run').toBeGreaterThan(0);
  });

  it('a complete run commits every mark at its end, and prints every result once, in order', async () => {
    const stub = await followers();
    const state = join(tempDir(), 'marks.json');
    const r = await sgq(['graph', 'followers', '-', '--all', '--since-last', '--state', state, '--concurrency', '1', '--jq', '.username'], { env: env(stub.url), input: 'a\nb\nc\n' });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe(['a', 'b', 'c'].flatMap((u) => [0, 1, 2].map((i) => `${u}_f${i}`)).join('\n'));
    expect(Object.keys(marksOf(state)).sort()).toEqual([KEY('a'), KEY('b'), KEY('c')]);
  });

  it('a failure on the very last record surfaces at the end: exit 1, the results before it, no mark moved', async () => {
    const stub = await followers();
    const state = join(tempDir(), 'marks.json');
    const r = await sgq(['graph', 'followers', '-', '--all', '--since-last', '--state', state, '--concurrency', '1', '--jq', 'if .username == "c_f2" then error("last") else .username end'], { env: env(stub.url), input: 'a\nb\nc\n' });
    expect(r.exitCode).toBe(1);
    expect(r.stdout.split('\n')).toEqual(['a_f0', 'a_f1', 'a_f2', 'b_f0', 'b_f1', 'b_f2', 'c_f0', 'c_f1']);
    expect(r.stderr).toContain('sgq: --jq failed on record 9: last; the output holds the results before it');
    expect(marksOf(state)[KEY('c')]).toBeUndefined();
  });

  it('a filter of the subset is answered without jq until a record needs jq, then jq takes over, in order', async () => {
    const offline = { SGQ_CONFIG_DIR: tempDir(), XDG_CACHE_HOME: tempDir('sgq-cache-') };
    const plain = Array.from({ length: 20_000 }, (_, i) => `{"u":"日本_${i}","t":"😀x\\u007f${i}"}`);
    // A number past 2^53 only jq prints as sent: from its page on, jq answers.
    const lines = [...plain, '{"u":"n_7","n":12345678901234567890}', '{"u":"x7","t":"abc"}'];
    const r = await sgq(['fmt', '-', '--jq', 'select(.u | test("7$"))'], { env: offline, input: `${lines.join('\n')}\n` });
    expect(r.exitCode, r.stderr).toBe(0);
    // jq writes DEL escaped, as the input has it.
    expect(r.stdout.split('\n')).toEqual([...lines.filter((l) => /7","/.test(l) || l.includes('"n_7"') || l.includes('"x7"'))]);
  });

  it('batches of MiBs go to the worker as bytes and come back byte for byte: any text, numbers as sent, a failure deep in a later batch', async () => {
    const offline = { SGQ_CONFIG_DIR: tempDir(), XDG_CACHE_HOME: tempDir('sgq-cache-') };
    // About 3.5 MiB: several batches, each buffer reused; characters of 1 to 4 bytes, exact numbers.
    const lines = Array.from({ length: 30_000 }, (_, i) => `{"i":${i},"s":"é中😀\\t${'x'.repeat(i % 50)}","n":1234567890123456789${i % 10},"d":0.1000000000000000055511151231257827,"e":1.0}`);
    const input = `${lines.join('\n')}\n`;
    const same = await sgq(['fmt', '-', '--jq', '.'], { env: offline, input });
    expect(same.exitCode, same.stderr).toBe(0);
    expect(same.stdout).toBe(lines.join('\n'));
    const failed = await sgq(['fmt', '-', '--jq', 'if .i == 25000 then error("deep") else .s end'], { env: offline, input });
    expect(failed.exitCode).toBe(1);
    expect(failed.stderr).toContain('sgq: --jq failed on record 25,001: deep; the output holds the results before it');
    expect(failed.stdout.split('\n')).toEqual(lines.slice(0, 25_000).map((l) => (JSON.parse(l) as { s: string }).s));
  });
  it("into a reader slower than jq, every result arrives whole: a batch's buffer, which holds its output, is not filled again while a write holds it", async () => {
    const dir = tempDir();
    const lines = Array.from({ length: 40_000 }, (_, i) => `{"i":${i},"s":"é中😀\\t${'x'.repeat(i % 50)}","n":1234567890123456789${i % 10}}`);
    writeFileSync(join(dir, 'in.ndjson'), `${lines.join('\n')}\n`);
    // Takes 16 KiB at a time, with a pause between: the pipe stays full, and sgq's writes wait.
    writeFileSync(join(dir, 'reader.py'), 'import os, sys, time\nout = open(sys.argv[1], "wb")\nwhile True:\n    chunk = os.read(0, 16384)\n    if not chunk: break\n    out.write(chunk)\n    time.sleep(0.001)\n');
    const q = JSON.stringify;
    const line = `${q(process.execPath)} ${q(BIN)} fmt - --jq '., .i' < ${q(join(dir, 'in.ndjson'))} | python3 ${q(join(dir, 'reader.py'))} ${q(join(dir, 'out'))}`;
    const r = await execa('bash', ['-o', 'pipefail', '-c', line], { env: { ...process.env, SGQ_CONFIG_DIR: tempDir(), XDG_CACHE_HOME: tempDir('sgq-cache-') }, reject: false });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(readFileSync(join(dir, 'out'), 'utf8')).toBe(lines.map((l, i) => `${l}\n${i}\n`).join(''));
  });

  it('strings print raw exactly as jq -r prints them: spaces at either end, empty strings, newlines, NUL, any script', async () => {
    const offline = { SGQ_CONFIG_DIR: tempDir(), XDG_CACHE_HOME: tempDir('sgq-cache-') };
    const texts = ['  both ends  ', '', '\n', 'a\nb\r\n', '\tTAB\t', 'nul\u0000in', '中文 😀 👨‍👩‍👧', ' '];
    const input = `${texts.map((s, i) => JSON.stringify({ i, s })).join('\n')}\n`;
    // A filter outside sgq's subset, so that jq-wasm in the worker prints it.
    const r = await sgq(['fmt', '-', '--jq', '.s, (.s | length), [.s]'], { env: offline, input });
    expect(r.exitCode, r.stderr).toBe(0);
    // (the helper drops the output's final newline, as execa does)
    expect(r.stdout).toBe(texts.map((s) => `${s}\n${[...s].length}\n${JSON.stringify([s])}`).join('\n'));
  });

  it('SIGTERM while jq works on a batch (a filter that would never end): exit 143 within the grace, no mark moved', async () => {
    const stub = await followers();
    const dir = tempDir();
    const state = join(dir, 'marks.json');
    // Before 3.2 the main thread blocked in Atomics.wait for jq's answer and never heard the signal.
    const child = spawn(process.execPath, [BIN, 'graph', 'followers', 'a', '--since-last', '--state', state, '--jq', 'last(range(1e15))', '--out', join(dir, 'out.txt')], { env: { ...process.env, ...env(stub.url) }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    let code: number | null | undefined;
    void exited.then((c) => (code = c));
    try {
      // jq is at work once the process has spent a second of CPU (the main thread alone would sit idle).
      await until(() => stub.requests.length > 0 && cpuSeconds(child.pid!) >= 1, 'jq to be at work on the page');
      child.kill('SIGTERM');
      // Generous for a busy machine; without the fix the run never ends.
      await until(() => code !== undefined, 'sgq to end after SIGTERM', 15_000);
    } finally {
      child.kill('SIGKILL');
    }
    expect(code, stderr).toBe(143);
    expect(stderr).toContain('interrupted by SIGTERM');
    expect(marksOf(state)).toEqual({});
    // The page was fetched (and paid for): jq only never answered it.
    expect(stderr).toContain(`${join(dir, 'out.txt')} not created; no record had been written to it`);
  });
  it("jq's WebAssembly aborting (its memory exhausted) is one line on stderr and exit 1, without Emscripten's own print", async () => {
    const offline = { SGQ_CONFIG_DIR: tempDir(), XDG_CACHE_HOME: tempDir('sgq-cache-') };
    const r = await sgq(['fmt', '-', '--jq', '[range(1e9)] | length'], { env: offline, input: '{"a":1}\n' });
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('sgq: --jq stopped: jq itself failed (Aborted()); run the same filter with the jq command on sgq -o ndjson');
  });

  it('a filter that reads the input stream (`inputs`) is refused before any request is paid: exit 2, one line naming --slurp', async () => {
    const stub = await followers();
    const refused = await sgq(['graph', 'followers', 'a', '--all', '--jq', 'reduce inputs as $r (0; . + 1)'], { env: env(stub.url) });
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toMatch(/^sgq: --jq cannot run `inputs`: .*--slurp/);
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused.stdout).toBe('');
    expect(stub.requests).toHaveLength(0);
    // With --slurp the filter runs once over the array, as jq -s runs it.
    const slurped = await sgq(['graph', 'followers', 'a', '--all', '--slurp', '--jq', 'length'], { env: env(stub.url) });
    expect([slurped.exitCode, slurped.stdout]).toEqual([0, '3']);
  });
});

describe("--jq when jq's thread dies or never answers (the test hook SGQ_TEST_JQ_THREAD)", () => {
  // Before 3.2 the main thread blocked in Atomics.wait for jq's answer: a thread that died
  // left sgq waiting for good, deaf to signals. A death must fail the run with one line, exit 1.
  const FILTER = '.username | ltrimstr("q")'; // not of sgq's subset: jq runs it
  /** The jq line of a run that died: what failed, and what to do. */
  const died = (why: RegExp) => new RegExp(`^sgq: --jq stopped: jq's thread ${why.source}; run the same filter with the jq command on sgq -o ndjson$`);

  it.each([
    ['exit@1', /ended \(exit code 9\) before it answered/],
    ['throw@1', /failed: SGQ_TEST_JQ_THREAD: thrown as asked/],
    // A small heap for both threads (V8's flag is the process's): jq's fills in a second.
    ['oom@1', /failed: .*memory limit.*/],
  ])("%s: one line saying jq's thread died, exit 1, no mark moved", async (hook, why) => {
    const stub = await followers();
    const state = join(tempDir(), 'marks.json');
    const r = await sgq(['graph', 'followers', '-', '--since-last', '--state', state, '--jq', FILTER], {
      env: { ...env(stub.url), SGQ_TEST_JQ_THREAD: hook },
      input: 'a\nb\nc\n',
      nodeFlags: hook.startsWith('oom') ? ['--max-old-space-size=128'] : [],
      // Without the fix the run never ends: the deadline catches that, it measures nothing.
      timeout: 30_000,
    });
    expect(r.timedOut, r.stderr).toBe(false);
    expect(r.exitCode, r.stderr).toBe(1);
    const jqLines = r.stderr.split('\n').filter((line) => line.includes('--jq'));
    expect(jqLines).toEqual([expect.stringMatching(died(why))]);
    expect(r.stderr).not.toMatch(/internal error|this is a bug|\n\s+at /);
    expect(marksOf(state)).toEqual({});
  });

  it('a death at a later batch: the results before it are written, the run fails the same way', async () => {
    const stub = await stubs((req) => {
      const page = (JSON.parse(req.body) as { page?: number }).page ?? 1;
      const records = Array.from({ length: 500 }, (_, i) => ({ username: `u${page}_${i}`, bio: 'x'.repeat(2000) }));
      return { body: envelope(page, page < 8 ? page + 1 : null, records) };
    });
    const r = await sgq(['graph', 'followers', 'a', '--all', '--jq', FILTER], { env: { ...env(stub.url), SGQ_TEST_JQ_THREAD: 'exit@2' } });
    expect(r.timedOut).toBe(false);
    expect(r.exitCode, r.stderr).toBe(1);
    expect(r.stderr.split('\n').filter((line) => line.includes('--jq'))).toEqual([expect.stringMatching(died(/ended \(exit code 9\) before it answered/))]);
    // The first batch was answered before the thread died: its results are out, in order.
    const out = r.stdout.split('\n').filter(Boolean);
    expect(out.length).toBeGreaterThan(0);
    expect(out.length).toBeLessThan(4000);
    expect(out).toEqual(out.map((_, i) => `u${Math.floor(i / 500) + 1}_${i % 500}`));
  });

  it.each(['SIGINT', 'SIGTERM'] as const)('%s while the main thread waits on a thread that never answers ends the run (130/143), no mark moved', async (signal) => {
    const stub = await followers();
    const dir = tempDir();
    const state = join(dir, 'marks.json');
    const child = spawn(process.execPath, [BIN, 'graph', 'followers', 'a', '--since-last', '--state', state, '--jq', FILTER], {
      env: { ...process.env, ...env(stub.url), SGQ_TEST_JQ_THREAD: 'spin@1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    let code: number | null | undefined;
    child.on('close', (c) => (code = c));
    try {
      // The thread spins once it has the batch: a second of CPU is spent after the page came.
      await until(() => stub.requests.length > 0 && cpuSeconds(child.pid!) >= 1, "jq's thread to be stuck on the page");
      child.kill(signal);
      // Generous for a busy machine; a blocked main thread would never end.
      await until(() => code !== undefined, `sgq to end after ${signal}`, 15_000);
    } finally {
      child.kill('SIGKILL');
    }
    expect(code, stderr).toBe(signal === 'SIGINT' ? 130 : 143);
    expect(stderr).toContain(`interrupted by ${signal}`);
    expect(marksOf(state)).toEqual({});
  });
});
