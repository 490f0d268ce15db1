import { execa, execaSync } from 'execa';
import { chmodSync, existsSync, mkdirSync, statSync, readFileSync, readdirSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, sgq, useSandboxProcess } from '../helpers/e2e.js';
import { lines, tempDir, serviceFolderIn } from '../helpers/run.js';
import { shortHash } from '../../src/fs/temp-names.js';
import { STALE_MS } from '../../src/fs/lock.js';

// The file layer (src/fs) attacked from outside: FIFOs where sgq reads its own state, links
// into /proc, locks and temporary files of runs on another host, and snapshot metadata that
// names a file outside the store.

/** Long enough for a start on a busy machine; a run that blocks on a FIFO never ends by itself. */
const PROMPT_MS = 20_000;

describe('reads of state and config never block on a FIFO (#15)', () => {
  const sb = useSandboxProcess();

  it('refuses a --state that is a FIFO with one line and exit 3, with nobody at its other end', async () => {
    const dir = tempDir();
    const state = join(dir, 'marks.json');
    execaSync('mkfifo', [state]);
    const r = await sgq(['graph', 'followers', 'jack', '--since-last', '--state', state], { env: sb.env(), timeout: PROMPT_MS });
    expect(r.timedOut).toBe(false);
    expect(r.exitCode).toBe(3);
    expect(lines(r.stderr)).toHaveLength(1);
    expect(r.stderr).toContain(`cannot read the --since-last state ${state}: it is a FIFO, not a regular file`);
    expect(r.stdout).toBe('');
  });

  it('refuses a config file that is a FIFO with one line and exit 3', async () => {
    const config = tempDir();
    execaSync('mkfifo', [join(config, 'config.json')]);
    const r = await sgq(['graph', 'followers', 'jack'], { env: { SGQ_CONFIG_DIR: config, SGQ_BASE_URL: sb.url }, timeout: PROMPT_MS });
    expect(r.timedOut).toBe(false);
    expect(r.exitCode).toBe(3);
    expect(lines(r.stderr)).toHaveLength(1);
    expect(r.stderr).toContain(`cannot read the config file ${join(config, 'config.json')}: it is a FIFO, not a regular file`);
  });
});

describe('--out through a link into /proc (#17)', () => {
  it('writes through a link to /proc/self/fd/1, with no lock', async () => {
    const dir = tempDir();
    symlinkSync('/proc/self/fd/1', join(dir, 'link'));
    const command = `set -o pipefail; '${process.execPath}' '${BIN}' --sandbox graph followers jack --out link | cat`;
    const r = await execa('bash', ['-c', command], { cwd: dir, env: { SGQ_CONFIG_DIR: tempDir() }, reject: false, timeout: 30_000 });
    expect(r.stderr).not.toContain('lock');
    expect(r.exitCode).toBe(0);
    const records = lines(r.stdout).map((l) => JSON.parse(l) as { follower_username?: string });
    expect(records.length).toBeGreaterThan(0);
    expect(records.every((rec) => typeof rec.follower_username === 'string')).toBe(true);
    expect(readdirSync(dir)).toEqual(['link']);
  });
});

describe('locks and temporary files of a run on another host (#19)', () => {
  const sb = useSandboxProcess();
  const otherHost = 'container-7f3a';
  const otherTemp = (pid: number) => `.f.ndjson.sgq-${pid}-0badf00d-${shortHash(otherHost)}.tmp`;
  const ago = (ms: number) => new Date(Date.now() - ms);

  it('takes over a lock whose heartbeat is stale, and sweeps that host\'s old temporary file', async () => {
    const dir = tempDir();
    const file = join(dir, 'f.ndjson');
    writeFileSync(`${file}.lock`, JSON.stringify({ pid: 4242, host: otherHost }));
    writeFileSync(join(dir, otherTemp(4242)), 'half a li');
    writeFileSync(join(dir, otherTemp(4343)), 'another run, still writing');
    // The killed run's lock and temporary file have not been touched for longer than the stale period.
    for (const name of [`${file}.lock`, join(dir, otherTemp(4242))]) utimesSync(name, ago(STALE_MS * 3), ago(STALE_MS * 3));
    const r = await sgq(['graph', 'followers', 'big_700', '--all', '--out', file], { env: sb.env() });
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    expect(lines(readFileSync(file, 'utf8'))).toHaveLength(700);
    // The fresh temporary file of the other host may belong to a live run: it stays.
    expect(readdirSync(dir).sort()).toEqual([otherTemp(4343), 'f.ndjson'].sort());
  });

  it('calls a lock with a fresh heartbeat busy (exit 8), and names the way out', async () => {
    const dir = tempDir();
    const file = join(dir, 'f.ndjson');
    writeFileSync(`${file}.lock`, JSON.stringify({ pid: 4242, host: otherHost }));
    const r = await sgq(['graph', 'followers', 'jack', '--out', file], { env: sb.env() });
    expect(r.exitCode).toBe(8);
    expect(lines(r.stderr)).toHaveLength(1);
    expect(r.stderr).toContain(`pid 4242 on ${otherHost}; lock ${file}.lock`);
    expect(r.stderr).toContain(`abandoned after ${STALE_MS / 1000} s without a heartbeat`);
    expect(r.stderr).toContain(`delete ${file}.lock`);
    expect(existsSync(file)).toBe(false);
  });
});

describe('snapshot metadata never leads out of the store (#5)', () => {
  const sb = useSandboxProcess();

  it('prune skips, with a warning, a snapshot whose metadata names a file outside its folder; the file survives', async () => {
    const root = tempDir();
    const store = join(root, 'store');
    mkdirSync(store);
    const victim = join(root, 'victim');
    writeFileSync(victim, 'precious\n');
    const run = (args: string[]) => sgq([...args, '--snapshot-dir', store], { env: sb.env() });
    expect((await run(['graph', 'followers', 'jack', '--all', '--snapshot'])).exitCode).toBe(0);
    const folder = join(serviceFolderIn(store), 'default', 'graph.get_followers', 'username', 'jack');
    const real = readdirSync(folder).find((n) => n.endsWith('.json'))!;
    const meta = JSON.parse(readFileSync(join(folder, real), 'utf8')) as Record<string, unknown>;
    // An older snapshot, planted: prune --keep 1 would remove it, and the file it names.
    const planted = join(folder, '2000-01-01T00-00-00.000Z-aaaaaa.json');
    writeFileSync(planted, JSON.stringify({ ...meta, taken_at: '2000-01-01T00:00:00.000Z', file: '../../../../../victim' }));

    const prune = await run(['snapshots', 'prune', '--keep', '1']);
    expect(prune.exitCode).toBe(0);
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
    expect(prune.stderr).toContain(`skipped the snapshot ${planted}: it names the data file "../../../../../victim"`);
    expect(lines(prune.stderr).filter((l) => l.includes('skipped'))).toHaveLength(1);
    // The real snapshot is still there, and listed alone.
    const list = await run(['snapshots', 'list', 'jack']);
    expect(lines(list.stdout)).toHaveLength(1);
  });
});

describe('modes', () => {
  const sb = useSandboxProcess();

  it('what sgq creates holding data is 0600: a new --out file, the marks (even over a 0644 file), the snapshots', async () => {
    const dir = tempDir();
    const out = join(dir, 'new.ndjson');
    const state = join(dir, 'marks.json');
    writeFileSync(state, '{"marks": {}}\n');
    chmodSync(state, 0o644);
    const store = join(dir, 'store');
    const marked = await sgq(['graph', 'followers', 'jack', '--all', '--out', out, '--since-last', '--state', state], { env: sb.env() });
    expect(marked.exitCode).toBe(0);
    expect((await sgq(['graph', 'followers', 'jack', '--all', '--snapshot', '--snapshot-dir', store], { env: sb.env() })).exitCode).toBe(0);
    const modeOf = (file: string) => statSync(file).mode & 0o777;
    expect(modeOf(out)).toBe(0o600);
    expect(modeOf(state)).toBe(0o600);
    const folder = join(serviceFolderIn(store), 'default', 'graph.get_followers', 'username', 'jack');
    const files = readdirSync(folder);
    expect(files).toHaveLength(2);
    for (const name of files) expect(modeOf(join(folder, name))).toBe(0o600);
  });
});
