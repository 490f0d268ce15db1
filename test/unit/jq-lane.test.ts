import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LaneStopped, workerLane } from '../../src/cli/jq/jq-lane.js';
import { jqFormatter } from '../../src/cli/jq/jq.js';
import { tempDir } from '../helpers/run.js';
import { captureSink } from '../helpers/sink.js';

// jq's worker thread as the main thread sees it, with stand-in workers that misbehave the
// ways a real one can: die without answering (out of memory, a crash), or never answer.

/** A worker script: `onMessage` is the body of its port's message handler. */
function fakeWorker(onMessage: string): string {
  const file = join(tempDir(), 'worker.cjs');
  // The lane's protocol (src/threads/lane.ts): requests come as { request }, answers go as { answer }.
  writeFileSync(file, `const { workerData } = require('node:worker_threads');\nconst answer = (a) => workerData.port.postMessage({ answer: a });\nworkerData.port.on('message', ({ request }) => { if (!request) return; ${onMessage} });\n`);
  return file;
}

// A filter outside the subset sgq answers itself (jq-subset.ts), so that the stand-in worker runs it.
const program = { filter: '.i | tojson', flags: [] };

describe("jq's lane to its worker thread", () => {
  it('a thread that dies before it answers fails the wait with a line naming its exit, not a wait for ever', async () => {
    const lane = await workerLane(fakeWorker('process.exit(3)'), program);
    const failure = await lane.check().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(LaneStopped);
    expect(failure).toMatchObject({ stopped: false, message: "jq's thread ended (exit code 3) before it answered" });
  });

  it('through the formatter, the same death fails the run as an internal error with what to do', async () => {
    const lane = await workerLane(fakeWorker("if (request.kind === 'batch') throw new Error('boom')"), program);
    const sink = captureSink();
    const f = jqFormatter(lane, { filter: program.filter }, sink);
    await f.write([{ i: 1 }] as never);
    await expect(Promise.resolve(f.end())).rejects.toThrow(/^--jq stopped: jq's thread failed: boom$/);
    expect(sink.text).toBe('');
  });

  it('a thread that answers a batch and dies on the next: the answer reaches the output before the failure, never lost', async () => {
    // The answer and the thread's exit reach the main thread in either order: tried many times.
    const worker = fakeWorker("if (request.kind !== 'batch') return; if (globalThis.seen) process.exit(4); globalThis.seen = true; answer({ out: '1\\n', stderr: '' })");
    for (let round = 0; round < 25; round++) {
      const lane = await workerLane(worker, program);
      const sink = captureSink();
      const f = jqFormatter(lane, { filter: program.filter }, sink);
      await f.write([{ i: 1 }] as never);
      await f.write([{ i: 2 }] as never);
      await expect(Promise.resolve(f.end()), `round ${round}`).rejects.toThrow(/^--jq stopped: jq's thread ended \(exit code 4\) before it answered$/);
      expect(sink.text, `round ${round}`).toBe('1\n');
    }
  });

  it('a stop gives jq its grace, then ends the thread: the wait ends as stopped, and the end refuses to claim the results', async () => {
    const lane = await workerLane(fakeWorker('/* never answers */'), program);
    const controller = new AbortController();
    const f = jqFormatter(lane, { filter: program.filter }, captureSink(), controller.signal);
    await f.write([{ i: 1 }] as never);
    controller.abort('SIGTERM');
    await expect(Promise.resolve(f.end())).rejects.toThrow(/^interrupted by SIGTERM$/);
    await expect(lane.waitBelow(0)).rejects.toMatchObject({ stopped: true });
  });

  it('answers that come within the grace still reach the output, and the end then claims them', async () => {
    const lane = await workerLane(fakeWorker("setTimeout(() => answer(request.kind === 'batch' ? { out: '1\\n', stderr: '' } : {}), 50)"), program);
    const controller = new AbortController();
    const sink = captureSink();
    const f = jqFormatter(lane, { filter: program.filter }, sink, controller.signal);
    await f.write([{ i: 1 }] as never);
    controller.abort('SIGINT');
    await f.end();
    expect(sink.text).toBe('1\n');
  });
});

describe("jq's lane: an answer already waiting on the port", () => {
  it('is handed over, not dropped, when the wait begins after it came (a main thread paused by a busy machine)', async () => {
    // The stand-in answers, then raises a flag the main thread waits on: the answer is on the
    // port before the wait begins, as when the OS pauses the main thread between the two.
    const posted = new Int32Array(new SharedArrayBuffer(4));
    const worker = fakeWorker("answer({ out: 'late\\n', stderr: '' }); Atomics.store(workerData.data.program.posted, 0, 1); Atomics.notify(workerData.data.program.posted, 0)");
    const lane = await workerLane(worker, { ...program, posted } as typeof program);
    lane.submit(new Uint8Array(4), 'records');
    expect(Atomics.wait(posted, 0, 0, 20_000), 'the stand-in to answer').not.toBe('timed-out');
    const answers = await lane.waitBelow(0);
    expect(answers.map((a) => a.out)).toEqual(['late\n']);
    lane.close();
  });
});

describe("jq's module compiled on the main thread and shared with the worker", () => {
  const WORKER = fileURLToPath(new URL('../../dist/jq-worker.cjs', import.meta.url));
  const WASM = fileURLToPath(new URL('../../dist/vendor/build/jq.wasm', import.meta.url));

  it('the check runs here, in jq 1.8, while the thread starts; the thread runs batches on the same module', async () => {
    const bad = await workerLane(WORKER, { filter: 'nosuch(1)', flags: ['-c'] }, WASM);
    expect(await bad.check()).toBe('nosuch/1 is not defined at <top-level>, line 1, column 1');
    bad.close();
    const good = await workerLane(WORKER, { filter: '.a, (.a | split("_"))', flags: ['-c'] }, WASM);
    expect(await good.check()).toBeUndefined();
    const sink = captureSink();
    const f = jqFormatter(good, { filter: '.a, (.a | split("_"))' }, sink);
    await f.write([{ a: 'x_y' }, { a: ' z ' }] as never);
    await f.end();
    expect(sink.text).toBe('x_y\n["x","y"]\n z \n[" z "]\n');
  });
});
