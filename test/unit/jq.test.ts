import { describe, expect, it, vi } from 'vitest';
import { createFormatter } from '../../src/cli/formats/formats.js';
import type { JqOptions } from '../../src/cli/jq/jq.js';
import { captureSink } from '../helpers/sink.js';
import { parseJson } from '../../src/core/json.js';
import { SgqError } from '../../src/core/errors.js';
import { until } from '../helpers/wait.js';
import { jqFormatter } from '../../src/cli/jq/jq.js';
import type { Answer, JqLane } from '../../src/cli/jq/jq-lane.js';

/** A lane whose worker is busy until `finish` answers everything submitted; it records each batch's text. */
function busyLane() {
  const batches: string[] = [];
  let answers: Answer[] = [];
  const lane: JqLane & { inFlight: number; finish(): Answer[] } = {
    inFlight: 0,
    check: () => Promise.resolve(undefined),
    submit(batch: Uint8Array) {
      batches.push(new TextDecoder().decode(batch));
      answers.push({ out: '', stderr: '', spare: batch });
      lane.inFlight++;
    },
    poll: () => [],
    waitBelow: (): Promise<Answer[]> => Promise.resolve(lane.finish()),
    stop() {},
    finish() {
      lane.inFlight = 0;
      return answers.splice(0);
    },
    close() {
      answers = [];
    },
  };
  return { lane, batches };
}

async function jq(options: JqOptions, pages: unknown[][]): Promise<string> {
  const sink = captureSink();
  const f = await createFormatter('ndjson', sink, { jq: options });
  for (const page of pages) await f.write(page as never, true);
  await f.end();
  return sink.text;
}

describe('--jq', () => {
  it('strings print raw, one per line; other results as compact JSON; several results per record stream in order', async () => {
    const out = await jq({ filter: '.name, .tags, .n, (.name | length > 1)' }, [[{ name: 'a\tb', tags: ['x', 1], n: null }], [{ name: '', tags: {}, n: 2.5 }]]);
    expect(out).toBe('a\tb\n["x",1]\nnull\ntrue\n\n{}\n2.5\nfalse\n');
  });

  it('keeps integers past 2^53 exact, in records and in --argjson', async () => {
    const record = parseJson('{"id":1234567890123456789,"nested":{"big":-98765432109876543210}}');
    expect(await jq({ filter: '.id, .nested' }, [[record]])).toBe('1234567890123456789\n{"big":-98765432109876543210}\n');
    expect(await jq({ filter: '$big', argjson: [['big', '12345678901234567890']] }, [[{}]])).toBe('12345678901234567890\n');
    expect(await jq({ filter: '"\\($s)-\\(.a)"', args: [['s', 'x y']] }, [[{ a: 1 }]])).toBe('x y-1\n');
  });

  it('runs once per record: empty results print nothing, and select keeps the order of the stream', async () => {
    const page1 = Array.from({ length: 500 }, (_, i) => ({ i }));
    const page2 = Array.from({ length: 500 }, (_, i) => ({ i: i + 500 }));
    const out = await jq({ filter: 'select(.i % 100 == 0) | .i' }, [page1, [], page2]);
    expect(out).toBe('0\n100\n200\n300\n400\n500\n600\n700\n800\n900\n');
  });

  it('--slurp runs the filter once over the array of every record of every page', async () => {
    expect(await jq({ filter: 'length, (map(.i) | add)', slurp: true }, [[{ i: 1 }, { i: 2 }], [{ i: 3 }]])).toBe('3\n6\n');
    expect(await jq({ filter: 'length', slurp: true }, [])).toBe('0\n');
  });

  it('a filter that does not compile is a usage error (exit 2) with jq\'s own words, and it never runs', async () => {
    for (const filter of ['.a |', '$undefined', 'foo(1)']) {
      const error = await createFormatter('ndjson', captureSink(), { jq: { filter } }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SgqError);
      expect((error as SgqError).exitCode).toBe(2);
      expect((error as SgqError).message).toMatch(/^--jq does not compile: /);
      expect((error as SgqError).message).not.toContain('\n');
    }
    // A filter that would never end on its input is checked without running it.
    await expect(createFormatter('ndjson', captureSink(), { jq: { filter: 'repeat(.)' } })).resolves.toBeDefined();
    // Nor when it opens with a directive, which only the program's start may hold (a check that
    // wrapped the filter failed there, then ran it as written on null to get jq's words: for ever).
    await expect(createFormatter('ndjson', captureSink(), { jq: { filter: 'module {a: 1}; repeat(.)' } })).resolves.toBeDefined();
  });

  it('a filter that opens with `module {…};` runs as jq runs it', async () => {
    expect(await jq({ filter: 'module {a: 1}; .i' }, [[{ i: 1 }, { i: 2 }], [{ i: 3 }]])).toBe('1\n2\n3\n');
    expect(await jq({ filter: 'module {a: 1};\ndef twice: . * 2; .i | twice', slurp: false }, [[{ i: 4 }]])).toBe('8\n');
  });

  it('a filter nested deeper than any stack is jq\'s to refuse (exit 2 with its words), not a crash of sgq', async () => {
    for (const filter of ['"\\('.repeat(20_000), `${'('.repeat(20_000)}.${')'.repeat(20_000)}`, `${'['.repeat(20_000)}${']'.repeat(20_000)}`]) {
      const error = await createFormatter('ndjson', captureSink(), { jq: { filter } }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SgqError);
      expect([(error as SgqError).exitCode, (error as SgqError).message]).toEqual([2, expect.stringMatching(/^--jq does not compile: memory exhausted/)]);
    }
  });

  it('a runtime error names the record by its position in the whole stream, after writing every result before it', async () => {
    // jq runs on batches beside the main thread: the error surfaces at a later write or at the end.
    const sink = captureSink();
    const f = await createFormatter('ndjson', sink, { jq: { filter: '.n + 1' } });
    await f.write([{ n: 1 }, { n: 2 }] as never);
    await expect((async () => {
      await f.write([{ n: 3 }, { n: 'x' }, { n: 5 }] as never);
      await f.end();
    })()).rejects.toThrow(/^--jq failed on record 4: string \("x"\) and number \(1\) cannot be added$/);
    expect(sink.text).toBe('2\n3\n4\n');
    const custom = captureSink();
    const g = await createFormatter('ndjson', custom, { jq: { filter: 'if .n == 2 then error("no good") else .n end' } });
    await expect((async () => {
      await g.write([{ n: 1 }, { n: 2 }] as never);
      await g.end();
    })()).rejects.toThrow(/^--jq failed on record 2: no good$/);
    expect(custom.text).toBe('1\n');
  });

  it('a failing record keeps what it printed before its error, as jq prints it; records after it print nothing', async () => {
    for (const slurp of [false, true]) {
      const sink = captureSink();
      const said: string[] = [];
      const filter = slurp ? '.[] | (.n, if .n == 3 then ("d" | debug) and error("stop") else empty end)' : '.n, (if .n == 3 then ("d" | debug) and error("stop") else .n * 10 end)';
      const f = await createFormatter('ndjson', sink, { jq: { filter, slurp, stderr: (text: string) => said.push(text) } });
      await expect((async () => {
        await f.write(Array.from({ length: 6 }, (_, i) => ({ n: i + 1 })) as never);
        await f.end();
      })()).rejects.toThrow(/stop$/);
      expect(sink.text).toBe(slurp ? '1\n2\n3\n' : '1\n10\n2\n20\n3\n');
      expect(said).toEqual(['["DEBUG:","d"]']); // a line, to which sgq's reporter adds its newline
    }
  });

  it('a failure deep in a batch of many pages is found exactly: the results before it, and its position', async () => {
    const sink = captureSink();
    const f = await createFormatter('ndjson', sink, { jq: { filter: 'if .i == 1234 or .i == 1500 then error("bad \\(.i)") else .i end' } });
    const pages = Array.from({ length: 6 }, (_, p) => Array.from({ length: 500 }, (_, i) => ({ i: p * 500 + i })));
    await expect((async () => {
      for (const page of pages) await f.write(page as never);
      await f.end();
    })()).rejects.toThrow(/^--jq failed on record 1,235: bad 1234$/);
    expect(sink.text).toBe(Array.from({ length: 1234 }, (_, i) => `${i}\n`).join(''));
  });

  it('a batch that is not full waits while jq is busy, and goes once jq is idle (one call, not one a page)', async () => {
    vi.useFakeTimers();
    try {
      const { lane, batches } = busyLane();
      // A filter outside the subset sgq answers itself (jq-subset.ts): jq runs it.
      const f = jqFormatter(lane, { filter: '.i | tojson' }, captureSink());
      f.write([{ i: 1 }] as never); // the first page goes at once: jq is busy with it
      expect(batches).toEqual(['[{"i":1}]']); // a page a line, as one array
      f.write([{ i: 2 }] as never);
      f.write([{ i: 3 }] as never);
      // Long past its moment to go, the batch stays while jq is busy...
      vi.advanceTimersByTime(1000);
      expect(batches).toHaveLength(1);
      // ...and goes, whole, once jq is idle again.
      lane.finish();
      vi.advanceTimersByTime(1000);
      expect(batches).toEqual(['[{"i":1}]', '[{"i":2}]\n[{"i":3}]']);
      await f.end();
    } finally {
      vi.useRealTimers();
    }
  });

  it('holds its records until their results reach the sink: no checkpoint commits over results still with jq', async () => {
    const sink = captureSink();
    const f = await createFormatter('ndjson', sink, { jq: { filter: '.i | tojson' } });
    expect(f.holdsUntilEnd).toBe(false);
    f.write([{ i: 1 }] as never); // the first page goes to jq at once
    f.write([{ i: 2 }] as never); // later ones wait for a full batch, or a moment
    expect(f.holdsUntilEnd).toBe(true);
    // (The first result may still be with jq's thread: tests run the thread users run.)
    expect(['', '1\n']).toContain(sink.text);
    await until(() => !f.holdsUntilEnd, 'the second result to reach the sink');
    expect(sink.text).toBe('1\n2\n');
    await f.end();
    expect(sink.text).toBe('1\n2\n');
  });
});

describe("--jq's batch buffers, which come back holding jq's output (answerBatch)", () => {
  it('one whose bytes went to the sink is filled again only once the sink has handed them on; the output is whole', async () => {
    // A lane that answers at once, its output the batch's own bytes in the batch's own buffer.
    const buffers: ArrayBufferLike[] = [];
    const waiting: Answer[] = [];
    const lane: JqLane = {
      inFlight: 0,
      check: () => Promise.resolve(undefined),
      submit(batch: Uint8Array) {
        buffers.push(batch.buffer);
        waiting.push({ out: batch, stderr: '', spare: batch });
      },
      poll: () => waiting.splice(0),
      waitBelow: () => Promise.resolve(waiting.splice(0)),
      stop() {},
      close() {},
    };
    // A sink that holds on to what it is given (as a pipe's pending write does) until it is flushed.
    const held: Uint8Array[] = [];
    let text = '';
    const sink = {
      ...captureSink(),
      flushed: false,
      write(chunk: string | Uint8Array) {
        held.push(typeof chunk === 'string' ? new TextEncoder().encode(chunk) : chunk);
      },
      flush() {
        text += held.splice(0).map((bytes) => new TextDecoder().decode(bytes)).join('');
        sink.flushed = true;
      },
    };
    // (--argjson: a filter only jq runs, never sgq's subset)
    const f = jqFormatter(lane, { filter: '[.s]', argjson: [['k', '1']] }, sink);
    // Pages of more than a batch (half a MiB) each: each goes to jq as it comes.
    const page = (c: string) => [{ s: c.repeat(600_000) }];
    await f.write(page('a') as never);
    await f.write(page('b') as never);
    expect(buffers[1]).not.toBe(buffers[0]);
    sink.flush();
    await f.write(page('c') as never);
    expect([buffers[0], buffers[1]]).toContain(buffers[2]);
    await f.end();
    sink.flush();
    expect(text).toBe(['a', 'b', 'c'].map((c) => `[{"s":"${c.repeat(600_000)}"}]`).join(''));
  });
});
