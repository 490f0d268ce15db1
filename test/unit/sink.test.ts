import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { StreamSink } from '../../src/cli/output/sink.js';

describe('StreamSink', () => {
  it('waits for drain without leaving listeners behind', async () => {
    const slow = new Writable({
      highWaterMark: 8,
      write(_chunk, _enc, done) {
        setImmediate(done);
      },
    });
    const sink = new StreamSink(slow, () => undefined);
    const before = { error: slow.listenerCount('error'), close: slow.listenerCount('close'), drain: slow.listenerCount('drain') };
    for (let i = 0; i < 30; i++) {
      sink.write('a line longer than the high-water mark\n');
      await sink.drain();
    }
    expect({ error: slow.listenerCount('error'), close: slow.listenerCount('close'), drain: slow.listenerCount('drain') }).toEqual(before);
  });

  it('treats EPIPE as a closed reader and any other error as a failure', () => {
    const make = () => new Writable({ write: (_c, _e, done) => done() });
    let closed = 0;
    const pipe = make();
    const quiet = new StreamSink(pipe, () => closed++);
    pipe.emit('error', Object.assign(new Error('broken pipe'), { code: 'EPIPE' }));
    expect(quiet.closed).toBe(true);
    expect(quiet.failure).toBeUndefined();
    const disk = make();
    const full = new StreamSink(disk, () => closed++);
    disk.emit('error', Object.assign(new Error('no space'), { code: 'ENOSPC' }));
    expect(full.failure?.message).toContain('ENOSPC');
    expect(closed).toBe(2);
  });
});
