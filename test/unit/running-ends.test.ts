import { PassThrough, Readable } from 'node:stream';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ApiClient, Reply } from '../../src/core/client.js';
import type { Io } from '../../src/cli/start/io.js';
import { Reporter } from '../../src/cli/stderr/reporter.js';
import type { Sink } from '../../src/cli/output/sink.js';
import { runJobs, type Job, type JobEnd, type RunContext } from '../../src/cli/run/jobs.js';
import { RunningEnds } from '../../src/cli/run/running-ends.js';
import { tempDir } from '../helpers/run.js';
import { until } from '../helpers/wait.js';

// A job's end (--snapshot's stage, diff and commit) may run on while its worker fetches the
// next user (jobs.ts), when the run says so (endsBeside: the snapshot store, until a sort of
// the run spills): at most --concurrency ends at once, each committed as it ends, the summary
// in the users' order, and the first end that fails fails the run as before.

/** A client whose every call answers one page of one record, naming the user asked; `calls` lists them in order. */
function oneRecordClient() {
  const calls: string[] = [];
  const client = {
    call: async (_path: string, payload: Record<string, unknown>): Promise<Reply> => {
      const user = String(payload.username);
      calls.push(user);
      const body = { data: [{ username: `follower-of-${user}` }], next_page: null, current_credits: 1000 };
      return { text: JSON.stringify(body), body, status: 200, headers: {} };
    },
  } as unknown as ApiClient;
  return { client, calls };
}

function context(client: ApiClient, extra: Partial<RunContext> = {}): RunContext {
  const io: Io = { stdout: new PassThrough(), stderr: new PassThrough(), stdin: Readable.from([]), env: {}, stdoutIsTTY: false, stderrIsTTY: false, stdinIsTTY: false };
  const sink: Sink = { write: () => undefined, drain: async () => undefined, closed: false, finish: async () => undefined, streams: true, flushed: true, delivered: true };
  return { client, sink, formatter: { write: () => undefined, end: () => undefined }, reporter: new Reporter(io), controller: new AbortController(), ...extra };
}

const options = (concurrency: number) => ({
  concurrency,
  knownCost: 1,
  raw: false,
  tagUser: true,
  label: 'graph followers',
  format: 'ndjson' as const,
  remainingFile: join(tempDir(), 'remaining.txt'),
  startedAt: new Date('2026-11-28T03:00:00Z'),
});

const job = (user: string, onEnd: (end: JobEnd) => Promise<void>): Job => ({
  user,
  request: { path: 'graph/get_followers', payload: () => ({ username: user }), sendKey: true, paginated: true, startPage: 1, follow: true },
  onEnd,
});

/** A promise and the function that settles it. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe('a job\'s end beside the next job\'s calls', () => {
  it('runs while its worker asks for the next user, and the run ends only once every end has', async () => {
    const { client, calls } = oneRecordClient();
    const events: string[] = [];
    const u1Asked = gate();
    const u0 = job('u0', async () => {
      events.push(`u0 end starts (${calls.length} call)`);
      // Ends only once u1 was asked: with ends awaited in turn, this would never settle.
      await u1Asked.opened;
      events.push('u0 end ends');
    });
    const u1 = job('u1', async () => {
      events.push('u1 end starts');
      u1Asked.open();
    });
    // A run whose ends were awaited in turn would never settle here: the test's deadline fails it.
    const summary = await runJobs([u0, u1], options(1), context(client, { endsBeside: () => true, onJobEnd: async () => void events.push('commit') }));
    expect(calls).toEqual(['u0', 'u1']);
    expect(events).toEqual(['u0 end starts (1 call)', 'u1 end starts', 'u0 end ends', 'commit', 'commit']);
    // The summary keeps the users' order, whatever order their ends came in.
    expect(summary.users.map((u) => u.user)).toEqual(['u0', 'u1']);
  });

  it('waits for each end in turn when the run does not say otherwise (a run without snapshots, or one whose sorts spilled)', async () => {
    for (const endsBeside of [undefined, () => false]) {
      const { client, calls } = oneRecordClient();
      const events: string[] = [];
      const end = (user: string) => async () => void events.push(`${user} ends after ${calls.length} calls`);
      await runJobs([job('u0', end('u0')), job('u1', end('u1'))], options(1), context(client, { endsBeside }));
      expect(events).toEqual(['u0 ends after 1 calls', 'u1 ends after 2 calls']);
    }
  });

  it('lets at most --concurrency ends run at once', async () => {
    const { client, calls } = oneRecordClient();
    const users = ['u0', 'u1', 'u2'];
    const gates = users.map(() => gate());
    let running = 0;
    let most = 0;
    const jobs = users.map((user, i) =>
      job(user, async () => {
        most = Math.max(most, ++running);
        await gates[i]!.opened;
        running--;
      }),
    );
    const run = runJobs(jobs, options(1), context(client, { endsBeside: () => true }));
    // u0's end runs beside u1's calls; then two ends run at --concurrency 1: u2 waits.
    await until(() => running === 2, 'the ends of u0 and u1');
    // The client answers without I/O: a few turns of the event loop settle everything it could do.
    for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(calls).toEqual(['u0', 'u1']);
    gates[1]!.open();
    await until(() => calls.length === 3, 'u2 asked once an end is done');
    gates[0]!.open();
    gates[2]!.open();
    await run;
    expect(most).toBe(2);
  });

  it('fails the run with the first end that fails, and starts no further user', async () => {
    const { client, calls } = oneRecordClient();
    const broken = new Error('the commit broke');
    let commits = 0;
    const ends = ['u0', 'u1', 'u2', 'u3'].map((user) => job(user, async () => undefined));
    const onJobEnd = async () => {
      if (++commits === 1) throw broken;
    };
    await expect(runJobs(ends, options(1), context(client, { endsBeside: () => true, onJobEnd }))).rejects.toBe(broken);
    expect(calls.length).toBeLessThan(4);
  });
});

describe('RunningEnds', () => {
  it('waits for room, and keeps a failure for the next wait even once the failed end is gone', async () => {
    const ends = new RunningEnds();
    const a = gate();
    ends.add(a.opened);
    ends.add(Promise.reject(new Error('b failed')));
    await expect(ends.atMost(1)).rejects.toThrow('b failed');
    expect(ends.failed).toBe(true);
    a.open();
    await expect(ends.atMost(0)).rejects.toThrow('b failed');
  });
});
