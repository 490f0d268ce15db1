// In process, what the dataset's Parquet writer costs the thread that runs it (issue 37: in a
// --snapshot run that is the main thread): `node bench/parquet-pages.mjs RECORDS.ndjson TREE
// [BEFORE]` encodes the records (the service's, as `sgq graph followers` printed them, their
// query_user dropped) in pages of 500 with a dataset's constants, with the writer of each tree's
// src/ (bundled here by esbuild), interleaved, CPU time; checks both wrote the same bytes; then
// compresses the pages the writer gzipped with gzipSync (its way) and with zlib.gzip on the
// threadpool, a row group's pages at once, and gives this thread's CPU time for each
// (/proc/self/task/PID/schedstat) and the process's. Prints one JSON line.
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import zlib from 'node:zlib';

const [recordsFile, tree, before] = process.argv.slice(2);
const ROUNDS = Number(process.env.PARQUET_ROUNDS ?? 10); // copies of the records per file
const PAIRS = Number(process.env.PARQUET_PAIRS ?? 8);

/** The tree's parseJson, ParquetWriter and datasetSchema, bundled from its sources. */
async function writerOf(dir, scratch, name) {
  const entry = join(scratch, `${name}.mjs`);
  writeFileSync(entry, ['core/json', 'parquet/parquet-writer', 'core/dataset/schema'].map((m) => `export * from ${JSON.stringify(join(dir, 'src', `${m}.ts`))};`).join('\n'));
  const out = join(scratch, `${name}.bundle.mjs`);
  await build({ entryPoints: [entry], bundle: true, platform: 'node', format: 'esm', outfile: out, logLevel: 'warning' });
  return import(pathToFileURL(out).href);
}

const cpuMs = (from) => {
  const c = process.cpuUsage(from);
  return (c.user + c.system) / 1000;
};
const threadMs = () => Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

/** Encodes ROUNDS copies of the pages into one file; the file's digest and the CPU it took. */
function encode({ ParquetWriter, datasetSchema }, pages) {
  const hash = createHash('sha256');
  const from = process.cpuUsage();
  const writer = new ParquetWriter((bytes) => hash.update(bytes), { declared: datasetSchema('graph.get_followers', 'records') });
  for (let r = 0; r < ROUNDS; r++) for (let p = 0; p < pages.length; p++) writer.writeFitting(pages[p], 0, { query_user: `nightly${p}_1000`, fetched_at: '2026-11-29T10:40:00.123Z' });
  writer.close();
  return { ms: cpuMs(from), digest: hash.digest('hex') };
}

/** The pages a writer gzips, by row group (gzipSync watched while it writes). */
function gzippedPages(lib, pages) {
  const groups = [];
  let current = [];
  const gzipSync = zlib.gzipSync;
  zlib.gzipSync = (bytes, options) => (current.push(new Uint8Array(bytes)), gzipSync(bytes, options));
  try {
    const writer = new lib.ParquetWriter(() => void (current.length && groups.push(current), (current = [])), { declared: lib.datasetSchema('graph.get_followers', 'records') });
    for (let p = 0; p < pages.length * ROUNDS; p++) writer.writeFitting(pages[p % pages.length], 0, { query_user: `u${p}`, fetched_at: '2026-11-29T10:40:00.123Z' });
    writer.close();
  } finally {
    zlib.gzipSync = gzipSync;
  }
  return groups;
}

async function gzipWays(groups) {
  const ways = { sync: { thread: [], cpu: [] }, threadpool: { thread: [], cpu: [] } };
  const gzip = (bytes) => new Promise((resolve, reject) => zlib.gzip(bytes, { level: 1 }, (error, out) => (error ? reject(error) : resolve(out))));
  for (let i = 0; i < PAIRS; i++) {
    for (const way of i % 2 ? ['threadpool', 'sync'] : ['sync', 'threadpool']) {
      const [t0, c0] = [threadMs(), process.cpuUsage()];
      if (way === 'sync') for (const group of groups) for (const page of group) zlib.gzipSync(page, { level: 1 });
      else for (const group of groups) await Promise.all(group.map(gzip));
      ways[way].thread.push(threadMs() - t0);
      ways[way].cpu.push(cpuMs(c0));
    }
  }
  return Object.fromEntries(Object.entries(ways).map(([way, { thread, cpu }]) => [way, { threadMs: median(thread), cpuMs: median(cpu) }]));
}

const scratch = mkdtempSync(join(os.tmpdir(), 'sgq-parquet-pages-'));
try {
  const lines = readFileSync(recordsFile, 'utf8').split('\n').filter(Boolean).map((line) => line.replace(/^\{"query_user":"[^"]*",/, '{'));
  const sides = [{ name: 'tree', lib: await writerOf(tree, scratch, 'tree') }, ...(before ? [{ name: 'before', lib: await writerOf(before, scratch, 'before') }] : [])];
  for (const side of sides) {
    // Each side's own parse: a RawNumber of one tree is not one of the other's.
    const records = lines.map((line) => side.lib.parseJson(line));
    side.pages = Array.from({ length: Math.ceil(records.length / 500) }, (_, i) => records.slice(i * 500, i * 500 + 500));
    side.ms = [];
    side.digest = encode(side.lib, side.pages).digest; // and a first, untimed run
  }
  if (sides.length > 1 && sides[0].digest !== sides[1].digest) throw new Error('the two trees wrote different bytes');
  for (let i = 0; i < PAIRS; i++) for (const side of i % 2 ? [...sides].reverse() : sides) side.ms.push(encode(side.lib, side.pages).ms);
  const groups = gzippedPages(sides[0].lib, sides[0].pages);
  const result = {
    records: lines.length * ROUNDS,
    sameBytes: sides.length > 1,
    encodeCpuMs: Object.fromEntries(sides.map((s) => [s.name, median(s.ms)])),
    gzip: { pages: groups.flat().length, megabytes: groups.flat().reduce((n, page) => n + page.length, 0) / 1e6, ...(await gzipWays(groups)) },
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
