import { linkSync, rmSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { copyIntoPlace, moveIntoPlace, syncFolder } from '../../fs/atomic.js';
import { acquireLock, type LockOptions } from '../../fs/lock.js';
import { partitions, type Partition } from './inventory.js';
import { COMMIT_WAIT_MS, KINDS, partName, runId, type DatasetLayout, type Kind } from './layout.js';
import { mergeParts } from './merge-parts.js';
import { readPartFile, type PartFile } from './part-file.js';
import { difference } from './conform.js';
import { rewritePart } from './rewrite.js';
import { datasetSchema, routeOfPartition } from './schema.js';
import { removeFile } from '../../fs/remove.js';

// `sgq dataset compact`: a file whose columns differ from its route's declared ones (an older
// sgq's) is rewritten in them, and a partition's files of one schema become one file. The
// rewritten and merged files are written under .sgq/staging while runs go on; then, holding
// the commit lock (so no run adds a file meanwhile), the next version is built beside the
// current one from hard links of every file kept plus the new files, and the link readers
// glob is swapped with one rename. A reader lists the old version or the new one: never
// both, never neither.

export interface Merged {
  kind: Kind;
  route: string;
  date: string;
  files: number;
  rows: number;
  /** Of those files, how many were rewritten in the route's declared columns (an older sgq's). */
  rewritten: number;
  /** Files left as they were: the only one of their schema in the partition. */
  kept: number;
}

interface Merge extends Merged {
  partition: Partition;
  sources: string[];
  temp: string;
  /** The merged file's name: compacted-<id>.parquet. */
  name: string;
}

/** A file of a partition as compaction takes it: as it is, or rewritten under staging in the declared columns. */
interface Source {
  name: string;
  part: PartFile;
  /** The rewritten file's temporary path. */
  rewritten?: string;
}

export async function compactDataset(layout: DatasetLayout, before: string | undefined, lockOptions: Omit<LockOptions, 'what'>, warn: (line: string) => void = () => undefined): Promise<Merged[]> {
  const lock = await acquireLock(layout.compactLock, { ...lockOptions, what: `the compaction of the dataset ${layout.root}` });
  const done: Merged[] = [];
  try {
    for (const kind of KINDS) {
      if (layout.current(kind) === layout.visible(kind)) throw new Error(`${layout.visible(kind)} is a folder, not the link sgq keeps there`);
      const merges = await mergeAll(layout, kind, before, warn);
      if (merges.length === 0) continue;
      await swap(layout, kind, merges, lockOptions);
      done.push(...merges.map(({ kind, route, date, files, rows, rewritten, kept }) => ({ kind, route, date, files, rows, rewritten, kept })));
    }
  } finally {
    lock.release();
  }
  return done;
}

/**
 * Writes, for every partition (before `before`), each file whose columns differ from its
 * route's declared ones rewritten in them, and one merged file of each schema that has
 * several files.
 */
async function mergeAll(layout: DatasetLayout, kind: Kind, before: string | undefined, warn: (line: string) => void): Promise<Merge[]> {
  const merges: Merge[] = [];
  const id = runId(new Date());
  const temps: string[] = [];
  // Each merged file's own name: compacted-<id>.parquet, compacted-<id>-2.parquet, …
  let named = 0;
  const nextName = () => partName(`compacted-${id}`, ++named);
  try {
    for (const partition of partitions(layout, [kind])) {
      if (before !== undefined && partition.date >= before) continue;
      const sources = await sourcesOf(layout, partition, warn, temps);
      merges.push(...(await mergePartition(layout, partition, sources, nextName)));
    }
  } catch (error) {
    for (const merge of merges) removeFile(merge.temp);
    throw error;
  } finally {
    // Rewritten files that were merged into another are not needed; those that stand alone are a merge's temp.
    const kept = new Set(merges.map((m) => m.temp));
    for (const temp of temps) if (!kept.has(temp)) removeFile(temp);
  }
  return merges;
}

/** The partition's files, those whose columns differ from the route's declared ones rewritten (their temporary paths added to `temps`). */
async function sourcesOf(layout: DatasetLayout, partition: Partition, warn: (line: string) => void, temps: string[]): Promise<Source[]> {
  const declared = routeOfPartition(partition.route) ? datasetSchema(partition.route, partition.kind) : undefined;
  const sources: Source[] = [];
  for (const name of partition.files) {
    const part = await readPartFile(join(partition.folder, name));
    if (!declared || difference(part.schema, declared) === undefined) {
      sources.push({ name, part });
      continue;
    }
    const { temp } = await rewritePart(part, declared, layout, warn);
    temps.push(temp);
    sources.push({ name, part: await readPartFile(temp), rewritten: temp });
  }
  return sources;
}

/** One merge per schema of several files, and one per rewritten file that stands alone. */
async function mergePartition(layout: DatasetLayout, partition: Partition, sources: Source[], nextName: () => string): Promise<Merge[]> {
  const groups = new Map<string, Source[]>();
  for (const source of sources) groups.set(source.part.signature, [...(groups.get(source.part.signature) ?? []), source]);
  const kept = [...groups.values()].filter((files) => files.length === 1 && !files[0]!.rewritten).length;
  const merges: Merge[] = [];
  for (const files of groups.values()) {
    if (files.length === 1 && !files[0]!.rewritten) continue;
    const { temp, rows } = files.length > 1 ? await mergeParts(files.map((f) => f.part), layout) : { temp: files[0]!.rewritten!, rows: files[0]!.part.rows };
    const rewritten = files.filter((f) => f.rewritten).length;
    merges.push({ kind: partition.kind, route: partition.route, date: partition.date, files: files.length, rows, rewritten, kept, partition, sources: files.map((f) => f.name), temp, name: nextName() });
  }
  return merges;
}

/**
 * Builds the next version (links of what is kept, the merged files) and points readers at it;
 * the commit lock keeps runs out meanwhile. A failure before the link moves removes the next
 * version whole, so no half-built one outlives it.
 */
async function swap(layout: DatasetLayout, kind: Kind, merges: Merge[], lockOptions: Omit<LockOptions, 'what'>): Promise<void> {
  const lock = await acquireLock(layout.commitLock, { ...lockOptions, waitMs: Math.max(lockOptions.waitMs, COMMIT_WAIT_MS), what: `the dataset ${layout.root}` });
  try {
    const current = layout.current(kind)!;
    const next = join(layout.versions(kind), `v${(layout.versionNumbers(kind).at(-1) ?? 0) + 1}`);
    try {
      buildVersion(layout, kind, current, next, merges);
      layout.point(kind, next);
    } catch (error) {
      for (const merge of merges) removeFile(merge.temp);
      rmSync(next, { recursive: true, force: true });
      throw error;
    }
    // The version before stays a while for readers that resolved the link to it; any other goes (older ones, one a failed compaction left).
    for (const n of layout.versionNumbers(kind)) {
      const version = join(layout.versions(kind), `v${n}`);
      if (version !== current && version !== next) rmSync(version, { recursive: true, force: true });
    }
  } finally {
    lock.release();
  }
}

/** Fills `next`: in each partition of `current`, a link to every file kept (those a run added since the merges began too) and the partition's merged files. */
function buildVersion(layout: DatasetLayout, kind: Kind, current: string, next: string, merges: Merge[]): void {
  const byFolder = new Map<string, Merge[]>();
  for (const merge of merges) byFolder.set(merge.partition.folder, [...(byFolder.get(merge.partition.folder) ?? []), merge]);
  const leftOut = new Set(merges.flatMap((m) => m.sources.map((s) => join(m.partition.folder, s))));
  const routes = new Set<string>();
  for (const partition of partitions(layout, [kind])) {
    const to = join(next, relative(current, partition.folder));
    layout.makeFolder(to);
    routes.add(dirname(to));
    for (const name of partition.files) if (!leftOut.has(join(partition.folder, name))) linkOrCopy(join(partition.folder, name), join(to, name), layout.modes.file);
    for (const merge of byFolder.get(partition.folder) ?? []) moveIntoPlace(merge.temp, join(to, merge.name));
    byFolder.delete(partition.folder);
    syncFolder(to);
  }
  // A merge whose partition is gone would lose its sources' rows: the version is not swapped in.
  if (byFolder.size > 0) throw new Error(`the partition ${[...byFolder.keys()][0]} changed during the compaction`);
  for (const route of routes) syncFolder(route);
  syncFolder(next);
}

/** A hard link costs no space; a file system without them gets a copy, flushed to disk as a part is. */
function linkOrCopy(from: string, to: string, mode: number): void {
  try {
    linkSync(from, to);
  } catch {
    copyIntoPlace(from, to, mode);
  }
}
