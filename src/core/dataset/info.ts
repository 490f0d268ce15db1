import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { JsonObject } from '../classify.js';
import { UNFIT } from '../../parquet/declared.js';
import { difference, expectedTypes } from './conform.js';
import { bytesOf, partitions, type Partition } from './inventory.js';
import type { DatasetLayout } from './layout.js';
import { readPartFile, type PartFile } from './part-file.js';
import { datasetSchema, routeOfPartition } from './schema.js';

// What `sgq dataset info` lists: the partitions (the default), each file (--files) or each
// route's columns (--schema). A file whose columns differ from its route's declared ones
// (written by an older sgq) is named with the difference; `dataset compact` rewrites it.

/** A partition's files, read (footers only), each with how it differs from its route's declared columns. */
async function filesOf(partition: Partition): Promise<{ name: string; part: PartFile; differs: string | null }[]> {
  const declared = routeOfPartition(partition.route) ? datasetSchema(partition.route, partition.kind) : undefined;
  const files = [];
  for (const name of partition.files) {
    const part = await readPartFile(join(partition.folder, name));
    files.push({ name, part, differs: (declared && difference(part.schema, declared)) ?? null });
  }
  return files;
}

/** One row per partition: kind, route, date, files, rows, bytes, and how many files differ from the route's columns. */
export async function partitionRows(layout: DatasetLayout): Promise<JsonObject[]> {
  const rows: JsonObject[] = [];
  for (const p of partitions(layout)) {
    const files = await filesOf(p);
    const count = files.reduce((sum, f) => sum + f.part.rows, 0);
    rows.push({ kind: p.kind, route: p.route, date: p.date, files: files.length, rows: count, bytes: bytesOf(p), differing: files.filter((f) => f.differs).length });
  }
  return rows;
}

/** One row per file: where it is, its rows and bytes, and how its columns differ from its route's (null when they do not). */
export async function fileRows(layout: DatasetLayout): Promise<JsonObject[]> {
  const rows: JsonObject[] = [];
  for (const p of partitions(layout)) {
    for (const { name, part, differs } of await filesOf(p)) {
      rows.push({ kind: p.kind, route: p.route, date: p.date, file: name, rows: part.rows, bytes: sizeOf(join(p.folder, name)), differs });
    }
  }
  return rows;
}

/**
 * One row per column of each route and kind the dataset holds: sgq's own and the route's
 * declared ones with their types, `_unfit`, then the fields the route does not declare that
 * its files hold (text).
 */
export async function schemaRows(layout: DatasetLayout): Promise<JsonObject[]> {
  const extras = new Map<string, Set<string>>();
  const routes: Partition[] = [];
  for (const p of partitions(layout)) {
    const key = `${p.kind} ${p.route}`;
    if (!extras.has(key)) routes.push(p);
    const seen = extras.get(key) ?? new Set<string>();
    extras.set(key, seen);
    for (const { part } of await filesOf(p)) for (const element of part.schema.slice(1)) seen.add(element.name);
  }
  return routes.flatMap(({ kind, route }) => {
    const declared = datasetSchema(route, kind);
    const own = new Set(datasetSchema('', kind).map((d) => d.name));
    const types = expectedTypes(declared);
    const found = [...extras.get(`${kind} ${route}`)!].filter((name) => !types.has(name));
    return [
      ...[...types].map(([column, type]) => ({ kind, route, column, type, source: own.has(column) || column === UNFIT ? 'sgq' : 'route' })),
      ...found.map((column) => ({ kind, route, column, type: 'VARCHAR', source: 'extra' })),
    ];
  });
}

function sizeOf(path: string): number | null {
  try {
    return statSync(path).size;
  } catch {
    return null; // gone with a compaction since the listing
  }
}
