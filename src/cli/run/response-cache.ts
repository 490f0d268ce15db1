import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { replaceFile } from '../../fs/atomic.js';
import { makePrivateFolder } from '../../fs/modes.js';
import { fileWarning } from '../../fs/file-errors.js';
import { readRegularFile } from '../../fs/read.js';
import { splitBaseUrl, type CacheRequest, type CachedAnswer, type ResponseCache } from '../../core/client.js';
import { listing } from '../../fs/read.js';
import type { StateOwner } from '../../core/service.js';
import { removeFile } from '../../fs/remove.js';

// `--cache TTL`: successful answers kept as files under $XDG_CACHE_HOME/sgq (else
// ~/.cache/sgq), one file per request. The name is a SHA-256 of the service (service.ts: all
// sandboxes are one, whatever their port), the profile, a hash of the key, the route and the
// body, so neither the key nor anything that would reveal it is in a name or a file. An entry is written to a temporary file and
// renamed into place: a run reading it at the same moment sees the old entry, the new one,
// or none, never half of one.

interface Entry extends CachedAnswer {
  stored_at: number;
}

const ENTRY = /^[0-9a-f]{64}\.json$/;

export class FileCache implements ResponseCache {
  /** The first write that failed (a full disk): the run goes on, uncached, and says so once. */
  failure?: string;

  constructor(
    readonly dir: string,
    private readonly ttlMs: number,
    /** Who asks: the service and profile, the key, and the address the routes' URLs start with, hashed into every entry's name. */
    private readonly caller: { owner: StateOwner; apiKey?: string; baseUrl: string },
    private readonly now: () => number = Date.now,
  ) {}

  private file(request: CacheRequest): string {
    const key = createHash('sha256').update(this.caller.apiKey ?? '').digest('hex');
    const { owner, baseUrl } = this.caller;
    // The route and its query, not the address: one service answers the same at any of its
    // addresses, written with or without its /api.
    const { origin, prefix } = splitBaseUrl(baseUrl);
    const route = request.url.startsWith(origin + prefix) ? request.url.slice(origin.length + prefix.length) : request.url;
    const name = createHash('sha256').update(JSON.stringify([owner.service, owner.profile, key, request.method, route, request.body ?? null])).digest('hex');
    return join(this.dir, `${name}.json`);
  }

  get(request: CacheRequest): CachedAnswer | undefined {
    try {
      const entry = JSON.parse(readRegularFile(this.file(request), 'utf8')) as Entry;
      if (typeof entry.text !== 'string' || !this.fresh(entry)) return undefined;
      return { status: entry.status, headers: entry.headers, text: entry.text, askedAt: typeof entry.askedAt === 'number' ? entry.askedAt : entry.stored_at };
    } catch {
      // None, unreadable or damaged: a miss, and the answer will replace it.
      return undefined;
    }
  }

  /**
   * Within its time to live, and not from the future: an entry stored while the clock was
   * ahead has an age below zero, which would pass the TTL for as long as the clock is behind.
   */
  private fresh(entry: Entry): boolean {
    const age = this.now() - entry.stored_at;
    return age >= 0 && age < this.ttlMs && !((entry.askedAt ?? 0) > entry.stored_at);
  }

  put(request: CacheRequest, answer: CachedAnswer): void {
    if (this.failure) return;
    const file = this.file(request);
    try {
      makePrivateFolder(this.dir);
      // Not flushed to disk: an entry lost in a crash is a miss, not worth two fsyncs a page.
      replaceFile(file, JSON.stringify({ stored_at: this.now(), ...answer } satisfies Entry), { durable: false });
    } catch (error) {
      this.failure = fileWarning(error, `cannot write the cache in ${this.dir}`, 'answers were not cached');
    }
  }
}

/** What `sgq cache info` shows: the entries and the bytes they take. */
export function cacheInfo(dir: string): { entries: number; bytes: number } {
  let entries = 0;
  let bytes = 0;
  for (const name of listing(dir)) {
    if (!ENTRY.test(name)) continue;
    try {
      bytes += statSync(join(dir, name)).size;
      entries++;
    } catch {
      // Removed meanwhile by another run's clear.
    }
  }
  return { entries, bytes };
}

/** Removes every entry (and temporary files of killed runs); returns how many entries went. */
export function clearCache(dir: string): number {
  let removed = 0;
  for (const name of listing(dir)) {
    if (!ENTRY.test(name) && !name.endsWith('.tmp')) continue;
    removeFile(join(dir, name));
    if (ENTRY.test(name)) removed++;
  }
  return removed;
}

