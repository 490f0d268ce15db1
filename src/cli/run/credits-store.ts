import { dirname, join } from 'node:path';
import { replaceFile } from '../../fs/atomic.js';
import { makePrivateFolder } from '../../fs/modes.js';
import { readRegularFile } from '../../fs/read.js';

// The last balance sgq saw, per profile: every run that got a `current_credits` records it,
// so `sgq credits` answers without a call (and without spending a credit). The file holds
// balances, times, routes and service addresses: never a key.

export interface SeenBalance {
  credits: number;
  /** When it was seen, ISO 8601 UTC. */
  seen_at: string;
  /** The route whose answer reported it. */
  route: string;
  base_url: string;
}

/** `credits.json` beside the config file; undefined when there is no place for it (no home folder). */
export function creditsFile(configPath: string | undefined): string | undefined {
  return configPath === undefined ? undefined : join(dirname(configPath), 'credits.json');
}

export function readBalances(file: string): Record<string, SeenBalance> {
  try {
    const parsed: unknown = JSON.parse(readRegularFile(file, 'utf8'));
    const profiles = (parsed as { profiles?: unknown } | null)?.profiles;
    return profiles && typeof profiles === 'object' ? (profiles as Record<string, SeenBalance>) : {};
  } catch {
    // Missing, damaged or not a regular file: nothing known, and the next run writes it afresh.
    return {};
  }
}

/** Records a profile's balance; throws when the file cannot be written (the caller decides how loud to be). */
export function recordBalance(file: string, profile: string, balance: SeenBalance): void {
  const profiles = { ...readBalances(file), [profile]: balance };
  makePrivateFolder(dirname(file));
  // Replaced atomically (a run reading it sees the old file or the new one) but not flushed to
  // disk: a note of the last balance is not worth two fsyncs (1-5 ms) in every command, and
  // a file lost or damaged by a crash reads as nothing known until the next run writes it.
  replaceFile(file, `${JSON.stringify({ profiles }, null, 2)}\n`, { durable: false });
}
