import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { classify } from '../../src/core/classify.js';
import { parseJson, parsedLosslessly, stringifyJson } from '../../src/core/json.js';
import { readPage } from '../../src/core/page.js';
import { DatasetCheckpoint } from '../../src/cli/dataset/dataset-checkpoint.js';
import { openWriterLane, type WriterLane } from '../../src/cli/dataset/writer-lane.js';
import { grantedRecords, type WriterSetup } from '../../src/cli/dataset/writer.js';
import { readParquet } from '../helpers/duckdb.js';
import { tempDir } from '../helpers/run.js';
import { onLinuxAsRoot, useTmpfs } from '../helpers/tmpfs.js';

// The dataset's writer in its worker thread (dist/dataset-worker.cjs, built by the test
// setup) and in the main thread (the fallback, and what in-process tests run): fed the same
// pages, they must write the same rows, read back by DuckDB with every digit.

const WORKER = fileURLToPath(new URL('../../dist/dataset-worker.cjs', import.meta.url));

const TWO_53_PLUS_1 = '9007199254740993';
const PAST_64_BITS = '18446744073709551617';
const LONG_DECIMAL = '0.12345678901234567890123';

/** A page of `n` followers as the service sends it, with an error record in the middle. */
function pageText(from: number, n: number, next: number | null): string {
  const rows = Array.from({ length: n }, (_, i) => {
    const k = from + i;
    const score = k % 2 === 0 ? LONG_DECIMAL : `${k}.5`;
    return `{"username":"u${k}","userid":${k === 0 ? PAST_64_BITS : k},"big":${TWO_53_PLUS_1},"score":${score},"last_checked":"2026-11-01T00:00:0${k % 10}.000001+00:00","bio":"é ✓ ${k}"}`;
  });
  rows.splice(1, 0, '{"error":"one record could not be read"}');
  return `{"page":1,"next_page":${next},"page_items":${n + 1},"data":[${rows.join(',')}]}`;
}

/** A page's text as the runner hands it over: lossless as the run's own parse found it. */
const asPage = (text: string, granted: number, wholeBodyIsRecord = false) => ({ text, granted, wholeBodyIsRecord, lossless: parsedLosslessly(parseJson(text)) });

const setupIn = (root: string): WriterSetup => {
  mkdirSync(join(root, '.sgq', 'staging'), { recursive: true });
  return { root, route: 'graph.get_followers', date: '2026-11-01', runId: '20261101T000000000Z-0000abcd', startedAt: '2026-11-01T00:00:00.000Z' };
};

const partFile = (root: string): string => {
  const folder = join(root, 'records', 'route=graph.get_followers', 'date=2026-11-01');
  const [name] = readdirSync(folder);
  return join(folder, name!);
};

/** Opens a lane, sends the pages (and a change), commits; the file's rows as text. */
async function writeWith(file: string | null, pages: ReturnType<typeof asPage>[]) {
  const root = tempDir('sgq-dataset-');
  const lane = await openWriterLane(setupIn(root), () => undefined, file);
  try {
    expect((await lane.send({ kind: 'open' })).failure).toBeUndefined();
    const answers = pages.map((page, i) => lane.send({ kind: 'page', user: i % 2 ? 'jack' : 'dorsey', ...page }));
    await lane.settle();
    expect((await Promise.all(answers)).filter((a) => a.failure)).toEqual([]);
    expect((await lane.send({ kind: 'cut' })).failure).toBeUndefined();
    expect((await lane.send({ kind: 'commit' })).failure).toBeUndefined();
    await lane.send({ kind: 'drop' });
    return { thread: lane.thread, ...(await readParquet(partFile(root), { asText: true })), staging: readdirSync(join(root, '.sgq', 'staging')) };
  } finally {
    await lane.close();
  }
}

describe('pageRecords: the worker picks the records the run printed', () => {
  const reply = (text: string) => ({ text, body: classify(200, {}, text), status: 200, headers: {} });

  it('the same records as readPage, error records left out, cut to the granted count, numbers exact', () => {
    const text = pageText(0, 5, 2);
    const printed = readPage(reply(text), 1).records;
    expect(grantedRecords(asPage(text, 5)).map(stringifyJson)).toEqual(printed.map(stringifyJson));
    expect(grantedRecords(asPage(text, 3)).map(stringifyJson)).toEqual(printed.slice(0, 3).map(stringifyJson));
    expect(stringifyJson(grantedRecords(asPage(text, 1)))).toContain(`"userid":${PAST_64_BITS}`);
    // As the run sends it: with where the run's own parse kept numbers as text, the same records.
    const sent = readPage(reply(text), 1);
    expect(sent.keptTokens?.inexact.length).toBeGreaterThan(0);
    expect(grantedRecords({ ...asPage(text, 5), keptTokens: sent.keptTokens }).map(stringifyJson)).toEqual(printed.map(stringifyJson));
  });

  it('a body that is the record (routes without data) is one record', () => {
    const text = `{"username":"jack","userid":${PAST_64_BITS}}`;
    const printed = readPage(reply(text), null, true).records;
    expect(grantedRecords(asPage(text, 1, true)).map(stringifyJson)).toEqual(printed.map(stringifyJson));
    expect(() => grantedRecords(asPage(text, 1))).toThrow(/no data key/);
  });

  it('a page whose numbers are all exact as doubles (lossless false) is read by JSON.parse alone, to the same records', () => {
    const text = '{"page":1,"next_page":null,"data":[{"username":"a","userid":9007199254740991,"score":1.5}]}';
    const page = asPage(text, 1);
    expect(page.lossless).toBe(false);
    expect(stringifyJson(grantedRecords(page))).toBe(stringifyJson(readPage(reply(text), 1).records));
    expect(asPage(pageText(0, 1, null), 1).lossless).toBe(true);
  });
});

describe('the writer in its worker thread and in the main thread', () => {
  it('writes the same rows from the same pages: ids past 2^53 and past 64 bits, long decimals, a page cut by --limit', async () => {
    expect(existsSync(WORKER)).toBe(true);
    // 12 pages of 1,000 (the first row group of 10,000 types the columns, a second follows), the last cut at 250.
    const pages = Array.from({ length: 12 }, (_, i) => asPage(pageText(i * 1000, 1000, i < 11 ? i + 2 : null), i < 11 ? 1000 : 250));
    const inWorker = await writeWith(WORKER, pages);
    const inMain = await writeWith(null, pages);
    expect([inWorker.thread, inMain.thread]).toEqual(['worker', 'main']);
    expect(inWorker.types).toEqual(inMain.types);
    expect(inWorker.rows).toEqual(inMain.rows);
    expect(inWorker.rows).toHaveLength(11_250);
    // The followers' declared columns (userid BIGINT), and the fields they lack as text: every digit as sent.
    expect(inWorker.types).toMatchObject({ query_user: 'VARCHAR', fetched_at: 'TIMESTAMP WITH TIME ZONE', userid: 'BIGINT', last_checked: 'TIMESTAMP WITH TIME ZONE', big: 'VARCHAR', score: 'VARCHAR', _unfit: 'VARCHAR' });
    expect(inWorker.rows[0]).toMatchObject({ query_user: 'dorsey', username: 'u0', userid: null, _unfit: `{"userid":${PAST_64_BITS}}`, big: TWO_53_PLUS_1, score: LONG_DECIMAL, bio: 'é ✓ 0' });
    expect(inWorker.rows[1]).toMatchObject({ username: 'u1', userid: '1', _unfit: null, score: '1.5' });
    expect(inWorker.rows.at(-1)).toMatchObject({ query_user: 'jack', username: 'u11249' });
    expect(inWorker.staging).toEqual([]);
  }, 60_000);

  it("a record's own query_user or fetched_at is its own: sgq's columns go to records that lack them", async () => {
    const text = '{"page":1,"next_page":null,"data":[{"username":"a","query_user":"theirs"},{"username":"b","fetched_at":"2020-01-01T00:00:00Z"},{"username":"c"}]}';
    const { rows } = await writeWith(null, [asPage(text, 3)]);
    expect(rows.map((r) => [r.username, r.query_user, r.fetched_at])).toEqual([
      ['a', 'theirs', rows[2]!.fetched_at],
      ['b', 'dorsey', '2020-01-01 00:00:00+00'],
      ['c', 'dorsey', rows[0]!.fetched_at],
    ]);
    expect(rows[0]!.fetched_at).not.toBe('2020-01-01 00:00:00+00');
  });

  it('answers in order, warnings before the answers of their batch, and nothing after close', async () => {
    const root = tempDir('sgq-dataset-');
    const seen: string[] = [];
    const lane: WriterLane = await openWriterLane(setupIn(root), (line) => seen.push(`warn ${line}`), WORKER);
    const order: number[] = [];
    const sent = Array.from({ length: 20 }, (_, i) => lane.send({ kind: 'page', user: 'jack', ...asPage(pageText(1 + i * 600, 600, null), 600) }).then(() => order.push(i)));
    // The second row group brings a string where the description declares an integer: the writer warns.
    const odd = lane.send({ kind: 'records', user: 'jack', ndjson: '{"username":"x","userid":"not a number"}\n' }).then(() => seen.push('answer'));
    await lane.settle();
    await Promise.all([...sent, odd]);
    expect(order).toEqual([...Array(20).keys()]);
    expect(seen).toEqual([expect.stringMatching(/userid "not a number" does not fit its column \(BIGINT\): kept exactly in the column _unfit/), 'answer']);
    await lane.close();
    expect(await lane.send({ kind: 'commit' })).toEqual({ failure: { message: 'the dataset writer is closed', thread: true } });
  }, 60_000);
});

describe('the dataset checkpoint and its thread', () => {
  /** Opens a dataset writing through `workerFile`, sends one page of 3 records, commits; where it wrote and what. */
  async function runThrough(workerFile: string) {
    const dir = tempDir('sgq-dataset-');
    const traced: string[] = [];
    const dataset = await DatasetCheckpoint.open({
      dir,
      route: 'graph.get_followers',
      startedAt: new Date('2026-11-01T00:00:00Z'),
      reporter: { warn: () => undefined, info: () => undefined, error: () => undefined, trace: (line) => traced.push(line) },
      stop: () => undefined,
      lockOptions: {},
      owner: { service: 'sandbox', profile: 'default' },
      workerFile,
    });
    try {
      const page = asPage(pageText(0, 3, null), 3);
      await dataset.hooks('jack', {}).onRecords!(grantedRecords(page), page.lossless, page);
      expect(dataset.pending).toBe(true);
      await dataset.commit();
    } finally {
      await dataset.close();
    }
    const { rows } = await readParquet(partFile(dir), { asText: true });
    // An id past BIGINT is kept in _unfit, every digit.
    return { traced, users: rows.map((r) => `${r.query_user} ${r.username} ${r.userid ?? /"userid":(\d+)/.exec(r._unfit!)?.[1]}`) };
  }

  it('writes through its worker thread, and falls back to the main thread when the thread cannot start, before any record', async () => {
    const broken = join(tempDir(), 'broken-worker.cjs');
    writeFileSync(broken, "throw new Error('no thread today');");
    const expected = [`jack u0 ${PAST_64_BITS}`, 'jack u1 1', 'jack u2 2'];
    expect(await runThrough(WORKER)).toEqual({ traced: ['dataset: Parquet is written in a worker thread'], users: expected });
    expect(await runThrough(broken)).toEqual({ traced: ['dataset: Parquet is written in the main thread'], users: expected });
  }, 60_000);
});

describe('a page sent while a commit is being written', () => {
  it('is pending after that commit, and the next commit keeps it: every record reaches the dataset', async () => {
    for (const workerFile of [WORKER, null]) {
      const dir = tempDir('sgq-dataset-');
      const dataset = await DatasetCheckpoint.open({
        dir,
        route: 'graph.get_followers',
        startedAt: new Date('2026-11-01T00:00:00Z'),
        reporter: { warn: () => undefined, info: () => undefined, error: () => undefined, trace: () => undefined },
        stop: () => undefined,
        lockOptions: {},
        owner: { service: 'sandbox', profile: 'default' },
        workerFile,
      });
      const send = (from: number) => {
        const page = asPage(pageText(from, 3, null), 3);
        return dataset.hooks('jack', {}).onRecords!(grantedRecords(page), page.lossless, page);
      };
      try {
        await send(0);
        // Another job's page arrives just after the commit was handed to the writer, before its answer.
        const lane = (dataset as unknown as { lane: WriterLane }).lane;
        const handOver = lane.send.bind(lane);
        let late: Promise<void> | undefined;
        lane.send = (request) => {
          const answer = handOver(request);
          if (request.kind === 'commit' && !late) late = send(100);
          return answer;
        };
        await dataset.commit();
        await late;
        expect(dataset.pending).toBe(true);
        await dataset.commit();
        expect(dataset.pending).toBe(false);
      } finally {
        await dataset.close();
      }
      const folder = join(dir, 'records', 'route=graph.get_followers', 'date=2026-11-01');
      const users = (await Promise.all(readdirSync(folder).map((name) => readParquet(join(folder, name), { asText: true })))).flatMap(({ rows }) => rows.map((r) => String(r.username)));
      expect(users.sort()).toEqual(['u0', 'u1', 'u100', 'u101', 'u102', 'u2']);
    }
  }, 60_000);
});

describe.runIf(onLinuxAsRoot)('the writer in its worker thread on a full disk', () => {
  const disk = useTmpfs('256k');

  it('answers ENOSPC for the write that failed and every later one; a drop leaves no part behind', async () => {
    const root = join(disk.path, 'ds');
    const lane = await openWriterLane(setupIn(root), () => undefined, WORKER);
    try {
      expect((await lane.send({ kind: 'open' })).failure).toBeUndefined();
      const answers = Array.from({ length: 40 }, (_, i) => lane.send({ kind: 'page', user: 'jack', ...asPage(pageText(i * 1000, 1000, null), 1000) }));
      await lane.settle();
      const failures = (await Promise.all(answers)).map((a) => a.failure?.code);
      expect(failures).toContain('ENOSPC');
      expect(failures.slice(failures.indexOf('ENOSPC')).every((code) => code === 'ENOSPC')).toBe(true);
      expect((await lane.send({ kind: 'commit' })).failure?.code).toBe('ENOSPC');
      await lane.send({ kind: 'drop' });
      expect(readdirSync(join(root, '.sgq', 'staging'))).toEqual([]);
    } finally {
      await lane.close();
    }
  }, 60_000);
});
