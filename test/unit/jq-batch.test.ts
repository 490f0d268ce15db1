import { describe, expect, it } from 'vitest';
import { ByteBatch } from '../../src/cli/jq/jq-batch.js';

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

describe('ByteBatch: the bytes --jq hands to jq', () => {
  it('holds records one a line, as UTF-8, growing past its buffer without splitting a character', () => {
    const batch = new ByteBatch(() => new Uint8Array(8));
    const pages = [['{"a":"é"}', '{"a":"中"}'], [], ['{"a":"😀x"}'], ['{"n":12345678901234567890}']];
    for (const page of pages) batch.append(page);
    expect(batch.records).toBe(4);
    const bytes = batch.take();
    expect(text(bytes)).toBe(pages.flat().join('\n'));
    expect(bytes.length).toBe(Buffer.byteLength(pages.flat().join('\n')));
  });

  it('take() hands over the bytes and starts again, empty; a buffer is taken only when a record comes', () => {
    const buffers = [new Uint8Array(64), new Uint8Array(64)];
    let taken = 0;
    const batch = new ByteBatch(() => buffers[taken++]!);
    batch.append([]);
    expect(taken).toBe(0);
    batch.append(['{"a":1}']);
    expect(text(batch.take())).toBe('{"a":1}');
    expect([batch.records, batch.length, taken]).toEqual([0, 0, 1]);
    batch.append(['{"b":2}', '{"c":3}']);
    const second = batch.take();
    expect(text(second)).toBe('{"b":2}\n{"c":3}');
    expect(second.buffer).toBe(buffers[1]!.buffer);
    expect(taken).toBe(2);
  });
});
