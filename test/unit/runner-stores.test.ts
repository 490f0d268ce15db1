import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { ApiClient } from '../../src/core/client.js';
import type { Io } from '../../src/cli/start/io.js';
import { Reporter } from '../../src/cli/stderr/reporter.js';
import type { Sink } from '../../src/cli/output/sink.js';
import { runJobs, type Job, type RunContext } from '../../src/cli/run/jobs.js';
import { ExitCode, SgqError } from '../../src/core/errors.js';
import { fileError } from '../../src/fs/file-errors.js';
import { tempDir } from '../helpers/run.js';
import { join } from 'node:path';

// A batch whose store cannot keep what it is given (docs/guarantees.md, "When a file cannot be
// written"): the run starts no further user, each would be paid for and not kept, and every
// user not kept is listed for the resume. The jobs here fail before any request, so no client
// is needed: what is tested is the runner's part.

const USERS = ['u0', 'u1', 'u2', 'u3', 'u4', 'u5'];
const full = () => Object.assign(new Error('ENOSPC: no space left on device, open'), { code: 'ENOSPC', syscall: 'open', path: '/store/u0/.store.lock' });

function context(onJobEnd?: RunContext['onJobEnd'], onJobsDone?: RunContext['onJobsDone']) {
  const stderr = new PassThrough();
  let err = '';
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  const io: Io = { stdout: new PassThrough(), stderr, stdin: Readable.from([]), env: {}, stdoutIsTTY: false, stderrIsTTY: false, stdinIsTTY: false };
  const sink: Sink = { write: () => undefined, drain: async () => undefined, closed: false, finish: async () => undefined, streams: true, flushed: true, delivered: true };
  const ctx: RunContext = {
    client: {} as ApiClient,
    sink,
    formatter: { write: () => undefined, end: () => undefined },
    reporter: new Reporter(io),
    controller: new AbortController(),
    onJobEnd,
    onJobsDone,
  };
  return { ctx, stderr: () => err };
}

const options = {
  concurrency: 1,
  knownCost: null,
  raw: false,
  tagUser: false,
  label: 'graph followers',
  format: 'ndjson' as const,
  resume: (who: { users: readonly (string | null)[] } | { file: string }) => `sgq graph followers ${'users' in who ? who.users.join(' ') : `- < ${who.file}`} --all --snapshot`,
  remainingFile: join(tempDir(), 'remaining.txt'),
  startedAt: new Date('2026-11-28T03:00:00Z'),
};

const job = (user: string, onStart: () => Promise<void>): Job => ({ user, request: {} as Job['request'], onStart });

describe('a store that cannot keep a user\'s results', () => {
  it('stops the batch at the user it failed: that user and every user not started are listed for the resume, in one line each', async () => {
    const { ctx, stderr } = context();
    const jobs = USERS.map((user) => job(user, async () => {
      if (user === 'u0') throw fileError(full(), { what: 'cannot create the lock file /store/u0/.store.lock', exitCode: ExitCode.internal });
      throw new Error(`${user} was started`);
    }));
    const summary = await runJobs(jobs, options, ctx);
    expect(summary.exit_code).toBe(ExitCode.internal);
    expect(stderr()).not.toContain('was started');
    expect(stderr().trim().split('\n')).toEqual([
      'sgq: u0: cannot create the lock file /store/u0/.store.lock: the disk is full (ENOSPC); free some space on it',
      'sgq: 6 users not finished; resume with: sgq graph followers u0 u1 u2 u3 u4 u5 --all --snapshot',
    ]);
  });

  it('a commit that fails mid-run stops the batch too, and the users whose results it dropped are listed with those not started', async () => {
    let ends = 0;
    // The second job's end finds the commit failed: the two users it had staged were dropped.
    const { ctx, stderr } = context(async () => (++ends === 2 ? ['u0', 'u1'] : undefined));
    const jobs = USERS.map((user) => job(user, async () => {
      if (user === 'u0' || user === 'u1') throw new SgqError(ExitCode.service, `${user}: the service answered: no data`);
      throw new Error(`${user} was started`);
    }));
    const summary = await runJobs(jobs, options, ctx);
    expect(stderr()).not.toContain('was started');
    expect(summary.resume).toBe('sgq graph followers u0 u1 u2 u3 u4 u5 --all --snapshot');
  });

  it('the last commit, once every job has ended, fails: the users it dropped are listed for the resume by this run', async () => {
    // Each job ends (an error record of the service) and nothing was due while they ran; the commit of all that was staged fails.
    const { ctx, stderr } = context(undefined, async () => ['u1', 'u2']);
    const jobs = USERS.slice(0, 3).map((user) => job(user, async () => {
      throw new SgqError(ExitCode.service, `${user}: the service answered: no data`);
    }));
    const summary = await runJobs(jobs, options, ctx);
    expect(summary.resume).toBe('sgq graph followers u1 u2 --all --snapshot');
    expect(stderr()).toContain('sgq: 2 users not finished; resume with: sgq graph followers u1 u2 --all --snapshot');
  });
});
