// sgq's own table against a table built on cli-table3 (the design card's package), in one
// process each: the same records (the sandbox's followers, the service's shape, parsed as sgq
// parses them), the same columns, cells and widths (sgq's: the six default columns fitted to 80
// columns by the first page), printed page by page. Only the rendering differs: cli-table3
// pads, cuts and joins each page's rows. `npm run bench` (section table) runs it; by hand:
//   node bench/table-engines.mjs ENGINE RECORDS   ENGINE: sgq | cli-table3; prints {ms, peakRssMiB, bytes}
//   node bench/table-engines.mjs check            what each engine prints of the first page, checked
import { build } from 'esbuild';
import { createRequire } from 'node:module';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const PAGE = 500;
const WIDTH = 80;

/** sgq's table, parser and sandbox records, bundled from src/ as the CLI bundles them. */
async function sgqParts() {
  const dir = mkdtempSync(join(os.tmpdir(), 'sgq-table-engines-'));
  const entry = join(dir, 'entry.ts');
  writeFileSync(entry, [
    `export { tableFormatter } from '${root}src/cli/formats/table-format.ts';`,
    `export { tableLayout, loadTable } from '${root}src/cli/formats/table.ts';`,
    `export { tableColumns } from '${root}src/cli/formats/table-columns.ts';`,
    `export { shownCell, headerCell, paint } from '${root}src/cli/formats/table-cells.ts';`,
    `export { parseJson } from '${root}src/core/json.ts';`,
    `export { relationRecord } from '${root}src/sandbox/records.ts';`,
  ].join('\n'));
  const out = join(dir, 'parts.mjs');
  await build({ entryPoints: [entry], bundle: true, platform: 'node', format: 'esm', outfile: out, logLevel: 'error', nodePaths: [join(root, 'node_modules')] });
  return import(out);
}

const parts = await sgqParts();
await parts.loadTable();
// 40 pages (20,000 records) made and parsed once, then handed out in turn: what is timed is the table.
const DISTINCT = 40;
const made = Array.from({ length: DISTINCT }, (_, n) => Array.from({ length: PAGE }, (_, i) => parts.parseJson(parts.relationRecord('followers', 673, n * PAGE + i, `user_${n * PAGE + i}`, Date.UTC(2026, 10, 28), i).text)));
const page = (n) => made[n % DISTINCT];

/** A sink that counts what it is given, as a terminal takes it. */
const counter = () => ({ bytes: 0, text: '', keep: false, write(t) { this.bytes += t.length; if (this.keep) this.text += t; } });

/** sgq's streamed table (table-format.ts), as a run on an 80-column terminal prints it. */
async function sgqEngine(sink) {
  const f = await parts.tableFormatter({ ...sink, closed: false, streams: true, write: (t) => sink.write(t) }, undefined, { width: WIDTH, color: false });
  return (records) => f.write(records, true);
}

/** cli-table3, borderless as gh prints, a table a page in the first page's columns and widths (sgq's). */
function cliTable3Engine(sink) {
  const Table = createRequire(join(root, 'package.json'))('cli-table3');
  let layout;
  const chars = Object.fromEntries(['top', 'top-mid', 'top-left', 'top-right', 'bottom', 'bottom-mid', 'bottom-left', 'bottom-right', 'left', 'left-mid', 'mid', 'mid-mid', 'right', 'right-mid'].map((k) => [k, '']));
  return (records) => {
    layout ??= parts.tableLayout(parts.tableColumns(Object.keys(records[0])), records, { width: WIDTH, roomToGrow: true });
    const { columns, widths } = layout;
    const first = sink.bytes === 0;
    const table = new Table({
      chars: { ...chars, middle: '  ' },
      style: { 'padding-left': 0, 'padding-right': 0, head: [], border: [], compact: true },
      colWidths: widths,
      colAligns: columns.map((c) => (c.right ? 'right' : 'left')),
      ...(first ? { head: columns.map((c) => c.header) } : {}),
    });
    for (const r of records) table.push(columns.map((c) => parts.paint(parts.shownCell(c, r[c.field], false).pieces, false)));
    sink.write(`${table.toString().replace(/ +$/gm, '')}\n`);
  };
}

const ENGINES = { sgq: sgqEngine, 'cli-table3': cliTable3Engine };

/** Renders `records` records page by page; RSS sampled after each page. */
async function measure(engine, records) {
  const sink = counter();
  const write = await ENGINES[engine](sink);
  let peak = process.memoryUsage().rss;
  const started = performance.now();
  for (let n = 0; n * PAGE < records; n++) {
    await write(page(n));
    peak = Math.max(peak, process.memoryUsage().rss);
  }
  return { ms: Math.round(performance.now() - started), peakRssMiB: +(peak / 2 ** 20).toFixed(1), bytes: sink.bytes };
}

/** The first page from each engine, and what is wrong in it: lone surrogates, rows whose columns are off. */
async function check() {
  const stringWidth = (await import(join(root, 'node_modules/string-width/index.js'))).default;
  const report = {};
  for (const engine of Object.keys(ENGINES)) {
    const sink = counter();
    sink.keep = true;
    await (await ENGINES[engine](sink))(page(0));
    const lines = sink.text.trimEnd().split('\n');
    // Where the last column (created, a date) starts on screen, by Unicode's measure (string-width 8).
    const starts = lines.map((l) => stringWidth(l.slice(0, l.lastIndexOf('  ') + 2)));
    report[engine] = {
      lines: lines.length,
      loneSurrogates: lines.filter((l) => /\p{Surrogate}/u.test(l)).length,
      misaligned: starts.filter((s) => s !== starts[0]).length,
      widerThanTerminal: lines.filter((l) => stringWidth(l) > WIDTH).length,
      examples: lines.filter((l, i) => /\p{Surrogate}/u.test(l) || starts[i] !== starts[0]).slice(0, 3),
    };
  }
  return report;
}

const [what, records] = process.argv.slice(2);
const result = what === 'check' ? await check() : await measure(what, Number(records));
process.stdout.write(`${JSON.stringify(result)}\n`);
