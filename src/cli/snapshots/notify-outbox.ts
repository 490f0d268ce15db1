import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { SgqError } from '../../core/errors.js';
import { notificationBody, type UserChanges, type SnapshotStore } from '../../core/snapshots/snapshots.js';
import { parseJson, stringifyJson, type Json } from '../../core/json.js';
import { pathSegment } from '../../core/service.js';
import { replaceFile } from '../../fs/atomic.js';
import { acquireLock, type Lock } from '../../fs/lock.js';
import { makePrivateFolder } from '../../fs/modes.js';
import { readRegularFile } from '../../fs/read.js';
import { removeFile } from '../../fs/remove.js';

// The notifications not yet delivered, kept in the snapshot store beside the snapshots they
// tell of, in a folder per service and profile (`@SERVICE/PROFILE/.notify`; a route's folder
// never starts with a dot). A run's notification is kept as parts, one per commit of its
// snapshots (`RUN.1.json`, `RUN.2.json` …), each written through the one commit rule (0600,
// flushed, renamed into place) before the snapshots it tells of commit: a commit writes only
// its own users' changes, never the whole notification again. The parts of a run are one
// notification, built when it is sent and removed once a receiver answered 2xx: delivery is
// at least once. They hold the changes only; the address (a secret) is the one the next run
// is given. A run holds its lock (`RUN.lock`) until it is sent, so another run re-sends only
// what a finished or killed run left.

/** `RUN.N.json`: the run's name (its start, pid and a random tag) and the part's number. */
const PART = /^([^.][^/]*)\.(\d+)\.json$/;

/** What a part holds: the command that ran, and the changes of the users one commit took. */
interface Part {
  command: string;
  changes: UserChanges[];
}

export class NotifyOutbox {
  constructor(readonly folder: string) {}

  /** The outbox of `profile`'s runs in `store` (whose folder is already its service's). */
  static of(store: SnapshotStore, profile: string): NotifyOutbox {
    return new NotifyOutbox(join(store.base, pathSegment(profile), '.notify'));
  }

  /**
   * A name for this run's notification, its lock held until it is sent: the name starts with
   * the run's start, so runs sort oldest first. Nothing is written yet.
   */
  async create(startedAt: Date): Promise<{ run: string; lock: Lock }> {
    makePrivateFolder(this.folder);
    const run = `${startedAt.toISOString().replaceAll(':', '-')}-${process.pid}-${randomBytes(3).toString('hex')}`;
    return { run, lock: await acquireLock(join(this.folder, run), { waitMs: 0, what: 'the notification of this run' }) };
  }

  /** Writes part `n` of a run's notification, durably, readable by its owner only; numbers exact (ids past 2^53). */
  writePart(run: string, n: number, part: Part): void {
    replaceFile(join(this.folder, `${run}.${n}.json`), `${stringifyJson(part as unknown as Json)}\n`);
  }

  /** The runs whose notification is kept, oldest first, each with its parts in order. */
  kept(): { run: string; parts: string[] }[] {
    let names: string[];
    try {
      names = readdirSync(this.folder);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const runs = new Map<string, { n: number; name: string }[]>();
    for (const name of names) {
      const m = PART.exec(name);
      if (m) runs.set(m[1]!, [...(runs.get(m[1]!) ?? []), { n: Number(m[2]), name }]);
    }
    return [...runs].sort(([a], [b]) => (a < b ? -1 : 1)).map(([run, parts]) => ({ run, parts: parts.sort((a, b) => a.n - b.n).map((p) => join(this.folder, p.name)) }));
  }

  /** The lock of a kept run, or undefined when a live run holds it (it sends it itself). */
  async claim(run: string): Promise<Lock | undefined> {
    try {
      return await acquireLock(join(this.folder, run), { waitMs: 0, what: 'a kept notification' });
    } catch (error) {
      if (error instanceof SgqError) return undefined;
      throw error;
    }
  }

  /** A kept run's notification as it is sent (JSON text) and its summary line; undefined when a part is not one sgq wrote. */
  body(parts: readonly string[]): { text: string; line: string } | undefined {
    const read: Part[] = [];
    for (const file of parts) {
      const part = readPart(file);
      if (!part) return undefined;
      read.push(part);
    }
    if (read.length === 0) return undefined;
    const body = notificationBody(read[0]!.command, read.flatMap((p) => p.changes));
    return { text: stringifyJson(body as unknown as Json), line: body.text };
  }

  /** Removes a delivered notification: its parts, oldest first. */
  remove(parts: readonly string[]): void {
    for (const file of parts) removeFile(file);
  }
}

function readPart(file: string): Part | undefined {
  try {
    const part = parseJson(readRegularFile(file, 'utf8')) as unknown as Partial<Part> | null;
    return part && typeof part.command === 'string' && Array.isArray(part.changes) ? (part as Part) : undefined;
  } catch {
    return undefined;
  }
}
