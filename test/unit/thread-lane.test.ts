import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { builtFile, openLane, startedThreads, ThreadEnded, type Lane } from '../../src/threads/lane.js';
import { tempDir } from '../helpers/run.js';

// The one worker lane (src/threads/lane.ts) that --jq, --dataset and sgq diff share, with
// stand-in threads speaking its protocol ({ request } in, { answer } or { note } out): answers
// in order, buffers moved, notes both ways, a thread's death told in one line, a stop with a
// grace, and the main thread when no thread starts.

/** A thread's script: `body` runs for each request (`request`, `answer(a, transfer)`, `note(n)` in scope). */
function script(body: string, onNote = ''): string {
  const file = join(tempDir(), 'thread.cjs');
  writeFileSync(
    file,
    [
      "const { workerData } = require('node:worker_threads');",
      'const { port, data } = workerData;',
      'const answer = (a, transfer) => port.postMessage({ answer: a }, transfer);',
      'const note = (n) => port.postMessage({ note: n });',
      `port.on('message', (m) => { if ('note' in m) { const n = m.note; ${onNote}; return; } const request = m.request; ${body} });`,
    ].join('\n'),
  );
  return file;
}

const open = <Req, Ans>(file: string, data: unknown = {}) => openLane<unknown, Req, Ans, string, string>({ script: file, name: 'the test thread', data }, () => () => ({ here: true }) as Ans);

describe('the worker lane', () => {
  it('answers in order, on the thread the spec names, and moves the buffers it is given', async () => {
    const before = startedThreads();
    // The thread answers in turn (serve.ts); each answer settles its own request's promise.
    const lane = await open<{ n: number; bytes: Uint8Array }, { n: number; length: number }>(script('answer({ n: request.n, length: request.bytes.length })'));
    expect(lane.thread).toBe('worker');
    expect(startedThreads()).toBe(before + 1);
    const bytes = new Uint8Array(1024);
    const answers = [0, 1, 2].map((n) => lane.send({ n, bytes: n === 0 ? bytes : new Uint8Array(8) }, n === 0 ? [bytes.buffer] : []));
    // Transferred, not copied: the sender's buffer is gone.
    expect(bytes.byteLength).toBe(0);
    expect(await Promise.all(answers)).toEqual([
      { n: 0, length: 1024 },
      { n: 1, length: 8 },
      { n: 2, length: 8 },
    ]);
    expect(lane.inFlight).toBe(0);
    await lane.close();
  });

  it('hears notes both ways, out of turn: a request may wait on a note', async () => {
    const file = script("globalThis.pending = request; note('waiting')", "if (n === 'go') answer({ went: globalThis.pending.n })");
    const lane = await open<{ n: number }, { went: number }>(file);
    lane.onNote = (n) => n === 'waiting' && lane.tell('go');
    expect(await lane.send({ n: 7 })).toEqual({ went: 7 });
    await lane.close();
  });

  it('a thread that answers one request and dies on the next: the answer first, then one line for what waits, and for every later request', async () => {
    const lane: Lane<number, number, string, string> = await open(script('if (request === 2) process.exit(5); answer(request)'));
    const heard: number[] = [];
    lane.onAnswer = (a) => heard.push(a);
    const first = lane.send(1);
    const second = lane.send(2);
    expect(await first).toBe(1);
    const failure = await second.catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ThreadEnded);
    expect(failure).toMatchObject({ stopped: false, message: 'the test thread ended (exit code 5) before it answered' });
    expect(heard).toEqual([1]);
    await expect(lane.waitBelow(0)).rejects.toBe(failure);
    await expect(lane.send(3)).rejects.toBe(failure);
  });

  it('a thread that throws fails what waits with its message', async () => {
    const lane = await open<number, number>(script("throw new Error('boom')"));
    await expect(lane.send(1)).rejects.toThrow(/^the test thread failed: boom$/);
  });

  it('a stop gives the thread its grace: what it answers within it arrives, then the wait ends as stopped', async () => {
    const lane = await open<number, number>(script('if (request === 1) setTimeout(() => answer(1), 10)'));
    const answered = lane.send(1);
    const never = lane.send(2);
    lane.stop(2_000);
    expect(await answered).toBe(1);
    await expect(never).rejects.toMatchObject({ stopped: true, message: 'the run was stopped' });
  });

  it("acknowledges a note of the thread's window once its handler has dealt with it, not before", async () => {
    // The thread answers each request with whether an acknowledgement has reached it; the
    // port keeps the order of messages, so an early one would come before the next request.
    const file = join(tempDir(), 'window.cjs');
    writeFileSync(
      file,
      [
        "const { port } = require('node:worker_threads').workerData;",
        'let acked = false;',
        "port.on('message', (m) => { if (m.ack) return void (acked = true); if (m.request === 1) port.postMessage({ note: 'changes', ack: true }); port.postMessage({ answer: acked }); });",
      ].join('\n'),
    );
    const lane = await open<number, boolean>(file);
    let dealtWith!: () => void;
    const heard: string[] = [];
    lane.onNote = (n) => {
      heard.push(n);
      return new Promise<void>((resolve) => (dealtWith = resolve));
    };
    expect(await lane.send(1)).toBe(false);
    expect(heard).toEqual(['changes']);
    expect(await lane.send(2), 'acknowledged before its handler settled').toBe(false);
    dealtWith();
    await new Promise((resolve) => setImmediate(resolve));
    expect(await lane.send(3)).toBe(true);
    await lane.close();
  });

  it('runs in the main thread, with the same handler, when the script is not built or the thread cannot start', async () => {
    const before = startedThreads();
    const unbuilt = await open<number, { here: boolean }>(join(tempDir(), 'not-built.cjs'));
    expect(unbuilt.thread).toBe('main');
    expect(await unbuilt.send(1)).toEqual({ here: true });
    // Data a thread cannot be given (a function cannot be cloned): `new Worker` throws, and the work stays here.
    const refused = await open<number, { here: boolean }>(script('answer(1)'), { f: () => 1 });
    expect(refused.thread).toBe('main');
    expect(startedThreads()).toBe(before);
    await refused.close();
    await expect(refused.send(1)).rejects.toMatchObject({ stopped: true, message: 'the test thread was closed' });
  });

  it('finds the built scripts from the sources too: the tests run the threads users run', () => {
    for (const name of ['jq-worker.cjs', 'dataset-worker.cjs', 'diff-worker.cjs']) expect(builtFile(name), name).toMatch(new RegExp(`/dist/${name.replace('.', '\\.')}$`));
  });
});
