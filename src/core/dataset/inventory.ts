import { statSync } from 'node:fs';
import { join } from 'node:path';
import { listing } from '../../fs/read.js';
import { KINDS, type DatasetLayout, type Kind } from './layout.js';

// What the current version of a dataset holds: its partitions and their files, as readers see them.

export interface Partition {
  kind: Kind;
  route: string;
  date: string;
  /** The folder, in the current version. */
  folder: string;
  /** The Parquet files' names, sorted (by run id, so by time). */
  files: string[];
}

/** A dataset's file: `*.parquet`, never a temporary file (they end in .tmp and live under .sgq). */
const isPart = (name: string): boolean => name.endsWith('.parquet') && !name.startsWith('.');

/** The partitions of the current versions, `kind` by `kind`, then by route and date. */
export function partitions(layout: DatasetLayout, kinds: readonly Kind[] = KINDS): Partition[] {
  const found: Partition[] = [];
  for (const kind of kinds) {
    const version = layout.current(kind);
    if (version === undefined) continue;
    for (const routeDir of listing(version).filter((n) => n.startsWith('route=')).sort()) {
      for (const dateDir of listing(join(version, routeDir)).filter((n) => n.startsWith('date=')).sort()) {
        const folder = join(version, routeDir, dateDir);
        found.push({ kind, route: routeDir.slice(6), date: dateDir.slice(5), folder, files: listing(folder).filter(isPart).sort() });
      }
    }
  }
  return found;
}

/** Bytes of a partition's files (a file removed meanwhile counts nothing). */
export function bytesOf(partition: Partition): number {
  let total = 0;
  for (const name of partition.files) {
    try {
      total += statSync(join(partition.folder, name)).size;
    } catch {
      // Gone with a compaction since the listing.
    }
  }
  return total;
}
