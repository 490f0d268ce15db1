import type { DiffCounts } from '../../core/churn/merge-diff.js';
import type { KeyStats } from '../../core/churn/keyed.js';
import { grouped } from '../output/words.js';

/** `12 gained, 3 lost, 985 unchanged`, with `renamed` when matched by id and `changed` when it was asked for. */
export function countsText(counts: DiffCounts, options: { changed: boolean; renames: boolean }): string {
  const parts = [`${grouped(counts.gained)} gained`, `${grouped(counts.lost)} lost`];
  if (options.renames) parts.push(`${grouped(counts.renamed)} renamed`);
  if (options.changed) parts.push(`${grouped(counts.changed)} changed`);
  parts.push(`${grouped(counts.unchanged)} unchanged`);
  return parts.join(', ');
}

/** What keying left out, for a warning; undefined when nothing was. */
export function leftOutText(stats: KeyStats, key: string, where: string): string | undefined {
  const parts: string[] = [];
  if (stats.missingKey) parts.push(`${grouped(stats.missingKey)} record${stats.missingKey === 1 ? '' : 's'} without "${key}" left out`);
  if (stats.duplicates) parts.push(`${grouped(stats.duplicates)} repeated "${key}" counted once`);
  return parts.length ? `${where}: ${parts.join('; ')}` : undefined;
}
