import { readFileSync, readdirSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RunMemory } from '../../src/core/sort/memory-budget.js';
import { LineBytes, LineBytesBuilder } from '../../src/core/records/line-bytes.js';
import { keyOrder } from '../../src/core/records/key-order.js';
import { SnapshotCapture } from '../../src/core/snapshots/capture.js';
import { SnapshotStore } from '../../src/core/snapshots/store.js';
import { tempDir } from '../helpers/run.js';

// Issue 37: a --snapshot run holds each user's lines as UTF-8 bytes from the page they came in
// (LineBytesBuilder), not as strings that outlived V8's young collections while the user was
// in flight; the sort orders an index of their keys and copies the bytes. Whatever the
// records, pages and budget (held in memory, or spilled to disk in runs of bytes), the staged
// file must be the lines in key order, the first of a key kept, and the counts of what was
// left out those of the sort of strings it replaces.

const text = (lines: readonly string[]) => lines.map((l) => `${l}\n`).join('');

describe('LineBytesBuilder and LineBytes', () => {
  it('holds lines added as text or as bytes, each readable by its key and decoded on demand', () => {
    const lines = ['{"id":"2","n":"José 🏳️‍🌈"}', `{"id":"10","n":"${'x'.repeat(200_000)}"}`, '{"id":"1","n":"été"}'];
    const builder = new LineBytesBuilder();
    builder.add('2', lines[0]!);
    builder.add('10', lines[1]!);
    const encoded = Buffer.from(`xx${lines[2]}yy`);
    builder.addBytes('1', encoded, 2, encoded.length - 2);
    expect(builder.bytes).toBe(Buffer.byteLength(text(lines)));
    const bytes = builder.done();
    expect(bytes.count).toBe(3);
    expect([0, 1, 2].map((i) => [bytes.key(i), bytes.line(i)])).toEqual([['2', lines[0]], ['10', lines[1]], ['1', lines[2]]]);
    expect(Buffer.concat([...bytes.pieces()]).toString()).toBe(text(lines));
    // A line longer than a piece starts a piece of its own; every piece is whole lines.
    expect([...bytes.pieces()].map((p) => p.length)).toEqual([Buffer.byteLength(lines[0]!) + 1, Buffer.byteLength(lines[1]! + lines[2]!) + 2]);
  });

  it('sorts by key (as strings), the first of a key kept and the others counted, the bytes copied as they were', () => {
    const keys = ['b', '10', 'a', '9', 'b', 'a', 'c'];
    const builder = new LineBytesBuilder();
    keys.forEach((key, i) => builder.add(key, `{"k":"${key}","i":${i},"t":"ü"}`));
    const stats = { missingKey: 0, duplicates: 0 };
    const sorted = builder.done().sorted(stats);
    const lines = Array.from({ length: sorted.count }, (_, i) => sorted.line(i));
    expect(lines).toEqual(['{"k":"10","i":1,"t":"ü"}', '{"k":"9","i":3,"t":"ü"}', '{"k":"a","i":2,"t":"ü"}', '{"k":"b","i":0,"t":"ü"}', '{"k":"c","i":6,"t":"ü"}']);
    expect(stats).toEqual({ missingKey: 0, duplicates: 2 });
    expect(Buffer.concat([...sorted.pieces()]).toString()).toBe(text(lines));
  });

  it('reads its lines back in batches of the size asked, with their keys', async () => {
    const bytes = LineBytes.of(Array.from({ length: 40 }, (_, i) => ({ key: String(i), line: `{"i":${i}}` })));
    const sizes: number[] = [];
    const all: string[] = [];
    for await (const batch of bytes.batches(16)) {
      sizes.push(batch.length);
      all.push(...batch.map((k) => `${k.key}=${k.line}`));
    }
    expect(sizes).toEqual([16, 16, 8]);
    expect(all).toEqual(Array.from({ length: 40 }, (_, i) => `${i}={"i":${i}}`));
  });

  it('gives its pieces to the next builder once recycled, which writes its own lines over them', () => {
    const line = (i: number) => `{"i":${i},"t":"${'é'.repeat(300)}"}`;
    const first = LineBytes.of(Array.from({ length: 2000 }, (_, i) => ({ key: String(i), line: line(i) })));
    expect([...first.pieces()].length).toBeGreaterThan(2);
    first.recycle();
    const second = LineBytes.of(Array.from({ length: 2000 }, (_, i) => ({ key: String(i), line: line(2000 - i) })));
    expect(Buffer.concat([...second.pieces()]).toString()).toBe(text(Array.from({ length: 2000 }, (_, i) => line(2000 - i))));
    expect(second.line(5)).toBe(line(1995));
  });
});

describe('keyOrder', () => {
  it("is sortKeyed's order for any keys, equal keys in the order given", () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.stringMatching(/^[0-9]{0,21}$/), fc.string({ maxLength: 4 })), { maxLength: 200 }), (keys) => {
        const expected = keys.map((key, i) => ({ key, i })).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.i - b.i));
        expect(Array.from(keyOrder(keys))).toEqual(expected.map((e) => e.i));
      }),
      { numRuns: 300 },
    );
  });
});

describe('SnapshotCapture over bytes', () => {
  const store = new SnapshotStore(tempDir('sgq-store-'), { pid: process.pid, lock: async () => ({ release: () => undefined }) }, 'sandbox');
  const meta = { taken_at: '2026-01-02T03:15:00.000Z', complete: true, credits_used: 1 };
  const record = fc.record({ id: fc.option(fc.stringMatching(/^[0-9]{1,3}$/), { nil: undefined, freq: 8 }), name: fc.string({ unit: 'grapheme', maxLength: 30 }) });
  let user = 0;
  const ways = { held: 0, spilled: 0 };

  it('stages what the sort of strings staged, held in memory or spilled in runs of bytes, and counts what it left out the same', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(record, { maxLength: 40 }), { maxLength: 8 }), fc.integer({ min: 50, max: 20_000 }), async (pages, budget) => {
        const all = pages.flat();
        const keyed = all.map((r, i) => ({ r, i })).filter(({ r }) => r.id !== undefined);
        const firsts = [...new Map([...keyed].reverse().map((k) => [k.r.id!, k] as const)).values()].sort((a, b) => (a.r.id! < b.r.id! ? -1 : a.r.id! > b.r.id! ? 1 : 0));
        const subject = { profile: 'default', route: 'graph/get_followers', how: 'username', user: `u${user++}` };
        const memory = new RunMemory(budget);
        const capture = new SnapshotCapture(store, subject, undefined, memory);
        // The first record that shows an id sets the field: records before it are left out.
        const chosen = all.findIndex((r) => r.id !== undefined);
        for (const page of pages) await capture.add(page as never, false);
        const staged = await capture.stage(meta);
        const written = gunzipSync(readFileSync(staged.current.dataPath)).toString('utf8');
        expect(written).toBe(text(firsts.filter((k) => chosen >= 0 && k.i >= chosen).map((k) => JSON.stringify(k.r))));
        expect(capture.stats).toEqual({ missingKey: all.length - keyed.length, duplicates: keyed.length - firsts.length });
        if (firsts.length) ways[capture.inOrder ? 'held' : 'spilled']++;
        await staged.drop();
        await staged.close();
        capture.release();
        expect(memory.lines.held).toBe(0);
        expect(readdirSync(store.folder(subject)).filter((f) => f.includes('sort.run'))).toEqual([]);
      }),
      { numRuns: 150 },
    );
    // Both ways were taken.
    expect(ways.held).toBeGreaterThan(10);
    expect(ways.spilled).toBeGreaterThan(10);
  });
});
