import { randomBytes } from 'node:crypto';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { SgqError } from '../../core/errors.js';
import type { Notification } from '../../core/churn/notification.js';
import type { SnapshotStore } from '../../core/churn/store.js';
import { parseJson, stringifyJson, type Json } from '../../core/json.js';
import { pathSegment } from '../../core/service.js';
import { replaceFile } from '../../fs/atomic.js';
import { acquireLock, type Lock } from '../../fs/lock.js';
import { makePrivateFolder } from '../../fs/modes.js';
import { readRegularFile } from '../../fs/read.js';

// The notifications not yet delivered, kept in the snapshot store beside the snapshots they
// tell of, in a folder per service and profile (`@SERVICE/PROFILE/.notify`; a route's folder
// never starts with a dot). One file per run, written through the one commit rule (0600,
// flushed, renamed into place) before the snapshots it tells of commit, and removed once a
// receiver answered 2xx: delivery is at least once. The file holds the body only; the address
// (a secret) is the one the next run is given. A run holds its file's lock until it is sent,
// so another run re-sends only what a finished or killed run left.

const SUFFIX = '.json';

export class NotifyOutbox {
  constructor(readonly folder: string) {}

  /** The outbox of `profile`'s runs in `store` (whose folder is already its service's). */
  static of(store: SnapshotStore, profile: string): NotifyOutbox {
    return new NotifyOutbox(join(store.base, pathSegment(profile), '.notify'));
  }

  /**
   * A new file for this run's notification, its lock held until it is sent: its name starts
   * with the run's start, so names sort oldest first. Nothing is written yet.
   */
  async create(startedAt: Date): Promise<{ file: string; lock: Lock }> {
    makePrivateFolder(this.folder);
    const file = join(this.folder, `${startedAt.toISOString().replaceAll(':', '-')}-${process.pid}-${randomBytes(3).toString('hex')}${SUFFIX}`);
    return { file, lock: await acquireLock(file, { waitMs: 0, what: 'the notification of this run' }) };
  }

  /** The notifications kept, oldest first (not the locks or temporary files beside them). */
  kept(): string[] {
    let names: string[];
    try {
      names = readdirSync(this.folder);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    return names.filter((n) => n.endsWith(SUFFIX) && !n.startsWith('.')).sort().map((n) => join(this.folder, n));
  }

  /** The lock of a kept file, or undefined when a live run holds it (it sends it itself). */
  async claim(file: string): Promise<Lock | undefined> {
    try {
      return await acquireLock(file, { waitMs: 0, what: 'a kept notification' });
    } catch (error) {
      if (error instanceof SgqError) return undefined;
      throw error;
    }
  }

  /** Writes a notification durably, readable by its owner only; its numbers exact (ids past 2^53). */
  write(file: string, body: Notification): void {
    makePrivateFolder(this.folder);
    replaceFile(file, `${stringifyJson(body as unknown as Json)}\n`);
  }

  /** A kept notification: its text as it is sent, and its summary line; undefined when it is gone or is not one sgq wrote. */
  read(file: string): { text: string; line: string } | undefined {
    try {
      const text = readRegularFile(file, 'utf8').trim();
      const body = parseJson(text) as unknown as Partial<Notification> | null;
      return body && typeof body.text === 'string' && Array.isArray(body.changes) ? { text, line: body.text } : undefined;
    } catch {
      return undefined;
    }
  }

  remove(file: string): void {
    rmSync(file, { force: true });
  }
}
