import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ExitCode, SgqError, usageError } from '../errors.js';
import { adoptsLegacyState, serviceName, type StateOwner } from '../service.js';
import { replaceFile } from '../../fs/atomic.js';
import { acquireLock, type LockOptions } from '../../fs/lock.js';
import { readRegularFile } from '../../fs/read.js';
import { partitions } from './inventory.js';
import { COMMIT_WAIT_MS, type DatasetLayout } from './layout.js';

// A dataset holds one service's records: DIR/sgq-dataset.json names it (a JSON file, not a
// .parquet, so no reader's glob takes it). The first run into a new or empty dataset claims
// it; a dataset of sgq 3.x (files, no claim) is adopted by the first run of a service other
// than the sandbox, whose records 3.x runs wrote there; a run of another service is refused
// before any request. Claims are made holding the commit lock, so two runs claiming one
// dataset at once agree: the second reads the first one's claim.

/** The file, at the dataset's root, that names the service whose records it holds. */
export const SERVICE_FILE = 'sgq-dataset.json';

export const serviceFile = (layout: DatasetLayout): string => join(layout.root, SERVICE_FILE);

/** The service a dataset holds records of; undefined when none is recorded (new, or written by sgq 3.x). */
export function recordedService(layout: DatasetLayout): string | undefined {
  const file = serviceFile(layout);
  let text: string;
  try {
    text = readRegularFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw unreadable(file, (error as Error).message);
  }
  let service: unknown;
  try {
    service = (JSON.parse(text) as { service?: unknown }).service;
  } catch {
    service = undefined;
  }
  if (typeof service !== 'string' || service === '') throw unreadable(file, 'it holds no "service"');
  return service;
}

/**
 * Checks that `owner`'s records may go into the dataset, claiming it when it names no
 * service yet; throws the one-line refusal (exit 2) when they may not. `startedAt` is noted
 * in a new claim. Says on stderr (`tell`) when a dataset of sgq 3.x is adopted.
 */
export async function claimDataset(layout: DatasetLayout, owner: StateOwner, startedAt: Date, lockOptions: Omit<LockOptions, 'what' | 'waitMs'>, tell: (line: string) => void): Promise<void> {
  const recorded = recordedService(layout);
  if (recorded !== undefined) return check(layout, recorded, owner);
  const lock = await acquireLock(layout.commitLock, { ...lockOptions, waitMs: COMMIT_WAIT_MS, what: `the dataset ${layout.root}` });
  try {
    const claimed = recordedService(layout);
    if (claimed !== undefined) return check(layout, claimed, owner);
    const legacy = holdsFiles(layout);
    if (legacy && !adoptsLegacyState(owner)) throw refusal(layout, 'sgq 3.x, from the service its profile used', owner, 'the next run against that service claims this one');
    replaceFile(serviceFile(layout), `${JSON.stringify({ service: owner.service, claimed_at: startedAt.toISOString() }, null, 2)}\n`, { mode: layout.modes.file });
    if (legacy) tell(`sgq: the dataset ${layout.root} (written by sgq 3.x) now belongs to ${serviceName(owner.service)}: runs of another service are refused (${SERVICE_FILE})`);
  } finally {
    lock.release();
  }
}

function check(layout: DatasetLayout, recorded: string, owner: StateOwner): void {
  if (recorded !== owner.service) throw refusal(layout, serviceName(recorded), owner, `a dataset holds one service's records, named in ${SERVICE_FILE}`);
}

/** Whether the dataset holds any file (records or changes): one a 3.x run wrote, when no service is recorded. */
export const holdsFiles = (layout: DatasetLayout): boolean => partitions(layout).some((p) => p.files.length > 0);

function refusal(layout: DatasetLayout, holder: string, owner: StateOwner, why: string): SgqError {
  return usageError(
    `the dataset ${layout.root} holds records of ${holder}; this run's come from ${serviceName(owner.service)}`,
    `give this run another dataset folder (${why}); nothing was fetched`,
  );
}

function unreadable(file: string, why: string): SgqError {
  const hint = existsSync(file) ? 'it names the service whose records the dataset holds: fix it ({"service": "<address>"}) or remove it, and the next run claims the dataset' : undefined;
  return new SgqError(ExitCode.config, `cannot read ${file}: ${why}`, hint);
}
