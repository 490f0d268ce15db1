import { closeSync, linkSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { copyIntoPlace, createTemp, moveIntoPlace, sealTemp, syncFolder, writeAll } from '../../fs/atomic.js';
import { acquireLock, type LockOptions } from '../../fs/lock.js';
import { ROW_GROUP } from '../output/parquet.js';
import { partitions, type Partition } from './inventory.js';
import { COMMIT_WAIT_MS, KINDS, partName, runId, type DatasetLayout, type Kind } from './layout.js';
import { DATASET_FILE } from './part.js';
import { readColumns, readPartFile } from './read.js';

// `sgq dataset compact`: a partition's files of one schema become one file. The merged files
// are written under .sgq/staging while runs go on; then, holding the commit lock (so no run
// adds a file meanwhile), the next version is built beside the current one from hard links
// of every file kept plus the merged files, and the link readers glob is swapped with one
// rename. A reader lists the old version or the new one: never both, never neither.

export interface Merged {
  kind: Kind;
  route: string;
  date: string;
  files: number;
  rows: number;
  /** Files left as they were: another schema, or columns sgq does not copy (DECIMAL). */
  kept: number;
}

interface Merge extends Merged {
  partition: Partition;
  sources: string[];
  temp: string;
  /** The merged file's name: compacted-<id>.parquet. */
  name: string;
}

export async function compactDataset(layout: DatasetLayout, before: string | undefined, lockOptions: Omit<LockOptions, 'what'>): Promise<Merged[]> {
  const lock = await acquireLock(layout.compactLock, { ...lockOptions, what: `the compaction of the dataset ${layout.root}` });
  const done: Merged[] = [];
  try {
    for (const kind of KINDS) {
      if (layout.current(kind) === layout.visible(kind)) throw new Error(`${layout.visible(kind)} is a folder, not the link sgq keeps there`);
      const merges = await mergeAll(layout, kind, before);
      if (merges.length === 0) continue;
      await swap(layout, kind, merges, lockOptions);
      done.push(...merges.map(({ kind, route, date, files, rows, kept }) => ({ kind, route, date, files, rows, kept })));
    }
  } finally {
    lock.release();
  }
  return done;
}

/** Writes the merged file of every partition (before `before`) that has several files of one schema: one merge a schema. */
async function mergeAll(layout: DatasetLayout, kind: Kind, before: string | undefined): Promise<Merge[]> {
  const merges: Merge[] = [];
  const id = runId(new Date());
  try {
    for (const partition of partitions(layout, [kind])) {
      if (before !== undefined && partition.date >= before) continue;
      const groups = new Map<string, { name: string; part: ReadPart }[]>();
      let kept = 0;
      for (const name of partition.files) {
        const part = await readPartFile(join(partition.folder, name));
        if (!part.copyable) kept++;
        else groups.set(part.signature, [...(groups.get(part.signature) ?? []), { name, part }]);
      }
      const several = [...groups.values()].filter((files) => files.length > 1);
      kept += [...groups.values()].filter((files) => files.length === 1).length;
      let n = 0;
      for (const files of several) {
        const { temp, rows } = await mergeFiles(files.map((f) => f.part), layout.staging);
        const sources = files.map((f) => f.name);
        merges.push({ kind, route: partition.route, date: partition.date, files: sources.length, rows, kept, partition, sources, temp, name: partName(`compacted-${id}`, ++n) });
      }
    }
  } catch (error) {
    for (const merge of merges) rmSync(merge.temp, { force: true });
    throw error;
  }
  return merges;
}

type ReadPart = Awaited<ReturnType<typeof readPartFile>>;

/** One file from several of one schema (their footers as mergeAll read them), row groups of up to ROW_GROUP rows, written to a temporary file and flushed. */
async function mergeFiles(parts: ReadPart[], staging: string): Promise<{ temp: string; rows: number }> {
  const { ByteWriter, ParquetWriter } = await import('hyparquet-writer');
  const temp = createTemp(join(staging, 'compact.parquet'), DATASET_FILE);
  try {
    const bytes: InstanceType<typeof ByteWriter> & { flush?: () => void } = new ByteWriter();
    const handOver = () => {
      writeAll(temp.fd, new Uint8Array(bytes.buffer.slice(0, bytes.index)));
      bytes.index = 0;
    };
    bytes.flush = handOver;
    bytes.finish = handOver;
    let writer: InstanceType<typeof ParquetWriter> | undefined;
    let buffered: { name: string; data: unknown[] }[] = [];
    let rows = 0;
    const flush = () => {
      const size = buffered[0]?.data.length ?? 0;
      if (size > 0) void writer!.write({ columnData: buffered as never, rowGroupSize: size });
      buffered = buffered.map(({ name }) => ({ name, data: [] }));
    };
    for (const part of parts) {
      writer ??= new ParquetWriter({ writer: bytes, schema: part.schema as never, createdBy: 'sgq' });
      if (buffered.length === 0) buffered = part.schema.slice(1).map(({ name }) => ({ name, data: [] }));
      for (const group of part.rowGroups) {
        const columns = await readColumns(part, group);
        columns.forEach((column, i) => buffered[i]!.data.push(...column.data));
        rows += group.end - group.start;
        if (buffered[0]!.data.length >= ROW_GROUP) flush();
      }
    }
    flush();
    void writer!.finish();
    sealTemp(temp.fd, { mode: DATASET_FILE });
    closeSync(temp.fd);
    return { temp: temp.path, rows };
  } catch (error) {
    closeSync(temp.fd);
    rmSync(temp.path, { force: true });
    throw error;
  }
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
      for (const merge of merges) rmSync(merge.temp, { force: true });
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
    mkdirSync(to, { recursive: true });
    routes.add(dirname(to));
    for (const name of partition.files) if (!leftOut.has(join(partition.folder, name))) linkOrCopy(join(partition.folder, name), join(to, name));
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
function linkOrCopy(from: string, to: string): void {
  try {
    linkSync(from, to);
  } catch {
    copyIntoPlace(from, to, DATASET_FILE);
  }
}
