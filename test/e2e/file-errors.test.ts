import { execa } from 'execa';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, sgq, useSandboxProcess } from '../helpers/e2e.js';
import { lines, tempDir } from '../helpers/run.js';
import { onLinuxAsRoot, useTmpfs } from '../helpers/tmpfs.js';

// What a batch of users does when the file system fails under it (docs/guarantees.md, "When a
// file cannot be written"): a snapshot store or a dataset that fills up, and a process out of
// file descriptors. Each user it hits ends with one classified line (what failed, where, what
// to do), the run exits with the code the docs give (1), no further user is paid for, and every
// user is either kept or listed for the resume; no job ever touches another's descriptor (EBADF,
// or Node's own assertion when a descriptor it holds is closed under it).

const sb = useSandboxProcess();

const USERS = Array.from({ length: 40 }, (_, i) => `u${i}_300`);

/** What no run may print, whatever fails: a bug's words, a stack, another job's descriptor closed. */
function expectNoBug(stderr: string): void {
  expect(stderr).not.toMatch(/EBADF|internal error|this is a bug|Assertion failed|^\s+at /m);
}

/** The users a run left for its resume: named in its resume commands, or in the file one reads. */
function usersLeft(stderr: string): Set<string> {
  const left = new Set<string>();
  for (const line of lines(stderr)) {
    const resume = /resume with: (.*)$/.exec(line)?.[1];
    if (resume === undefined) continue;
    for (const word of resume.split(' ')) if (/^'?u\d+_\d+'?$/.test(word)) left.add(word.replaceAll("'", ''));
    const file = / < '?([^' ]+)'?/.exec(resume)?.[1];
    for (const user of file ? lines(readFileSync(file, 'utf8')) : []) left.add(user);
  }
  return left;
}

/** The users whose snapshot was committed in `store`. */
function snapshotted(store: string): Set<string> {
  const service = readdirSync(store).find((name) => name.startsWith('@'));
  const users = join(store, service ?? '@none', 'default', 'graph.get_followers', 'username');
  if (!existsSync(users)) return new Set();
  return new Set(readdirSync(users).filter((user) => readdirSync(join(users, user)).some((name) => name.endsWith('.json'))));
}

describe.runIf(onLinuxAsRoot)('a snapshot store that fills up during a batch (tmpfs)', () => {
  const disk = useTmpfs('256k');

  it('each user it hits ends with one classified line; no further user is started; every user is kept or listed for the resume; no descriptor of another job is closed', async () => {
    // Twice, the disk emptied in between: a descriptor closed twice does not always land on another's.
    for (const round of [1, 2]) {
      const store = join(disk.path, `store-${round}`);
      rmSync(join(disk.path, `store-${round - 1}`), { recursive: true, force: true });
      mkdirSync(store);
      const r = await sgq(['graph', 'followers', '-', '--all', '--snapshot', '--snapshot-dir', store, '--concurrency', '8'], { env: { ...sb.env(), SGQ_CONFIG_DIR: tempDir() }, input: USERS.join('\n'), timeout: 60_000 });
      expectNoBug(r.stderr);
      expect(r.exitCode, r.stderr.slice(-2000)).toBe(1);
      const failures = lines(r.stderr).filter((line) => /^sgq: u\d+_300: /.test(line));
      expect(failures.length).toBeGreaterThan(0);
      for (const line of failures) {
        expect(line).toContain(store);
        expect(line).toMatch(/the disk is full \(ENOSPC\); free some space on it/);
      }
      const left = usersLeft(r.stderr);
      const kept = snapshotted(store);
      expect(left.size, 'the run stopped starting users once the store was full').toBeGreaterThan(0);
      for (const user of USERS) expect(kept.has(user) !== left.has(user), `${user}: kept ${kept.has(user)}, listed ${left.has(user)}`).toBe(true);
    }
  }, 180_000);
});

describe.runIf(onLinuxAsRoot)('a dataset that fills up during a batch (tmpfs)', () => {
  const disk = useTmpfs('512k');

  it('stops the batch in one classified line; the users not kept are listed for the resume', async () => {
    const dataset = join(disk.path, 'ds');
    const r = await sgq(['graph', 'followers', '-', '--all', '--dataset', dataset, '--concurrency', '8'], { env: { ...sb.env(), SGQ_CONFIG_DIR: tempDir() }, input: Array.from({ length: 40 }, (_, i) => `u${i}_3000`).join('\n'), timeout: 60_000 });
    expectNoBug(r.stderr);
    expect(r.exitCode, r.stderr.slice(-2000)).toBe(1);
    expect(r.stderr.match(/cannot write the dataset \S+: the disk is full \(ENOSPC\); free some space on it/g)).toHaveLength(1);
    expect(usersLeft(r.stderr).size).toBeGreaterThan(0);
  }, 120_000);

  it('--summary json still ends stderr with the summary, whose exit_code is the run\'s', async () => {
    const dataset = join(disk.path, 'ds-summary');
    const r = await sgq(['graph', 'followers', '-', '--all', '--dataset', dataset, '--concurrency', '8', '--summary', 'json'], { env: { ...sb.env(), SGQ_CONFIG_DIR: tempDir() }, input: Array.from({ length: 40 }, (_, i) => `u${i}_3000`).join('\n'), timeout: 60_000 });
    expectNoBug(r.stderr);
    expect(r.exitCode, r.stderr.slice(-2000)).toBe(1);
    const last = JSON.parse(lines(r.stderr).at(-1)!) as { exit_code: number; totals: { pages: number } };
    expect(last.exit_code).toBe(1);
    expect(last.totals.pages).toBeGreaterThan(0);
    expect(r.stderr.match(/cannot write the dataset \S+: the disk is full \(ENOSPC\)/g)).toHaveLength(1);
  }, 120_000);
});

describe.runIf(process.platform === 'linux')('out of file descriptors (ulimit -n 32)', () => {
  it('--parallel 4 --snapshot --dataset: each user it hits ends with one classified line naming the limit and what to do; the users not kept are listed for the resume', async () => {
    const home = tempDir();
    // 32: the run's own descriptors (Node's, the pool's, the stores') leave a few for the users' files: some jobs meet it.
    const users = Array.from({ length: 24 }, (_, i) => `u${i}_300`);
    let emfile = 0;
    for (let round = 0; round < 3; round++) {
      const args = [BIN, 'graph', 'followers', '-', '--all', '--parallel', '4', '--concurrency', '8', '--snapshot', '--snapshot-dir', join(home, `store-${round}`), '--dataset', join(home, `ds-${round}`)];
      const r = await execa('bash', ['-c', 'ulimit -n 32; exec "$0" "$@"', process.execPath, ...args], {
        env: { ...sb.env(), SGQ_CONFIG_DIR: join(home, 'config'), NO_COLOR: '' },
        input: users.join('\n'),
        reject: false,
        timeout: 60_000,
      });
      expectNoBug(r.stderr);
      const hit = lines(r.stderr).filter((line) => line.includes('EMFILE'));
      // bash's `ulimit -n 32` sets the hard limit too: the line says who may raise it.
      for (const line of hit) expect(line).toMatch(/too many open files: sgq met its limit of 32 open files \(EMFILE\); it is the hard limit too, which root raises \(`ulimit -n 4096` as root, or the system's limits\.conf\); or lower --concurrency/);
      if (hit.length === 0) {
        expect(r.exitCode, r.stderr).toBe(0);
        continue;
      }
      emfile++;
      expect([1, 7], r.stderr.slice(-2000)).toContain(r.exitCode);
      // The users left are listed, or (the pool's idle connections still holding descriptors at
      // the end) the line says their list could not be saved, in the same words.
      const unsaved = /^sgq: cannot save the users left to \S+: too many open files: .*\(EMFILE\)/m.test(r.stderr);
      expect(usersLeft(r.stderr).size > 0 || unsaved, r.stderr.slice(-2000)).toBe(true);
    }
    expect(emfile, 'the limit was met in at least one of the runs').toBeGreaterThan(0);
  }, 180_000);
});
