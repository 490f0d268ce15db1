import { statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DEFAULT_PROFILE } from '../../core/config.js';
import { adoptsLegacyState, ownerFolder, serviceOf, type StateOwner } from '../../core/service.js';
import { replaceFile } from '../../fs/atomic.js';
import { makePrivateFolder } from '../../fs/modes.js';
import { readRegularFile } from '../../fs/read.js';
import { balanceProblem, damagedNoteLine, isPrice, isRecord, keptBalance, parseNote, type Note, type NoteWarning, type ObservedPrice, type SeenBalance } from './credits-note.js';

export type { NoteWarning, ObservedPrice, SeenBalance } from './credits-note.js';

// What sgq saw of an account, per service and profile (service.ts says whose): the last
// balance (every run that got a `current_credits` records it, so `sgq credits` answers
// without a call) and the price it measured for each route (docs/credits.md). Each owner's
// note is a file of its own, `credits/@SERVICE/PROFILE/note.json` beside the config file, so
// runs of other profiles or services never write it. It holds balances, prices, times, routes
// and an address: never a key. Notes of sgq 3.x (credits.json, credits.PROFILE.json), whose
// entries name the address they were seen at, are read as the note of that address's service
// until the owner's own note is first written, which carries them over.

/** The folder of `owner`'s note and calls ledger; undefined when there is no place for it (no home folder). */
export function creditsFolder(configPath: string | undefined, owner: StateOwner): string | undefined {
  return configPath === undefined ? undefined : ownerFolder(join(dirname(configPath), 'credits'), owner);
}

const noteIn = (folder: string) => join(folder, 'note.json');

/**
 * The owner's note as read; `found` says its own file was there and read (so its folder
 * exists). What cannot be read of it is told to `warn` and left out.
 */
function readNote(configPath: string, owner: StateOwner, warn?: NoteWarning): Note & { found: boolean } {
  const file = noteIn(creditsFolder(configPath, owner)!);
  let text: string;
  try {
    text = readRegularFile(file, 'utf8');
  } catch {
    // Missing, unreadable or not a regular file: what sgq 3.x saw for this service, if anything.
    return { ...legacyNote(configPath, owner, warn), found: false };
  }
  const { note, problem } = parseNote(text);
  if (problem !== undefined) warn?.(damagedNoteLine(file, problem));
  return { ...note, found: true };
}

/** The last balance seen by `owner`, if any. */
export function readBalance(configPath: string, owner: StateOwner, warn?: NoteWarning): SeenBalance | undefined {
  return readNote(configPath, owner, warn).balance;
}

/** The prices observed by `owner`, route by route; a hand-damaged entry is skipped (and told to `warn`). */
export function readObservedPrices(configPath: string, owner: StateOwner, warn?: NoteWarning): Map<string, number> {
  const found = new Map<string, number>();
  for (const [route, seen] of Object.entries(readNote(configPath, owner, warn).prices)) found.set(route, seen.credits);
  return found;
}

/** What a run adds to the note: its last balance, and prices it observed. */
export interface SeenByRun {
  balance?: SeenBalance;
  prices?: Record<string, ObservedPrice>;
}

/**
 * Records what a run saw in `owner`'s note; throws when the file cannot be written (the caller
 * decides how loud to be).
 */
export function recordSeen(configPath: string, owner: StateOwner, seen: SeenByRun, warn?: NoteWarning): void {
  updateNote(configPath, owner, warn, (note) => {
    // Never a balance JSON cannot hold (1e400 would be written as null): the page refused it already.
    if (seen.balance && balanceProblem(seen.balance) === undefined) note.balance = seen.balance;
    if (seen.prices) note.prices = { ...note.prices, ...seen.prices };
  });
}

/** Forgets the prices `owner` learned; returns them, route by route (none: nothing written). */
export function forgetPrices(configPath: string, owner: StateOwner, warn?: NoteWarning): Map<string, number> {
  const forgotten = readObservedPrices(configPath, owner, warn);
  if (forgotten.size > 0) updateNote(configPath, owner, warn, (note) => void (note.prices = {}));
  return forgotten;
}

/**
 * How many times a note is merged again into what another run wrote meanwhile, before it is
 * written over it anyway (a note lost, never a run held up).
 */
const MERGES = 8;

/**
 * Replaces the note with `change` applied. With no lock (a lock would cost every run more than
 * the note is worth), runs of the same owner may end at the same time: just before the rename,
 * the file is checked to be the one that was read (its inode, size and times), and read and
 * changed again if another run replaced it meanwhile, so that the prices of the routes each
 * observed are kept.
 */
function updateNote(configPath: string, owner: StateOwner, warn: NoteWarning | undefined, change: (note: Note) => void): void {
  const target = noteIn(creditsFolder(configPath, owner)!);
  let stamp = stampOf(target);
  let note = readNote(configPath, owner, warn);
  // A file just read has its folder; only the first note (or one after the folder went) makes it.
  if (!note.found) makePrivateFolder(dirname(target));
  for (let merges = 1; ; merges++) {
    let now = stamp;
    change(note);
    // Replaced atomically (a run reading it sees the old file or the new one) but not flushed to
    // disk: a note of the last balance is not worth two fsyncs (1-5 ms) in every command, and
    // a file lost or damaged by a crash reads as nothing known until the next run writes it.
    const proceed = () => (now = stampOf(target)) === stamp || merges === MERGES;
    if (replaceFile(target, noteText(note), { durable: false, proceed })) return;
    stamp = now;
    note = readNote(configPath, owner, warn);
  }
}

function noteText({ balance, prices }: Note): string {
  const shape = Object.keys(prices).length ? { balance, prices } : { balance };
  return `${JSON.stringify(shape, null, 2)}\n`;
}

/** Which version of the file is in place: another run's rename changes its inode, and its times. */
function stampOf(file: string): string | undefined {
  try {
    const stat = statSync(file, { bigint: true, throwIfNoEntry: false });
    return stat && `${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`;
  } catch {
    return undefined; // as readNote: nothing known
  }
}

// --- the notes of sgq 3.x, read only ---
// 3.4 kept the default profile's note in credits.json and another profile's in
// credits.PROFILE.json; before 3.4 every profile's was in credits.json. Each balance and price
// names the address it was seen at.

/** What sgq 3.x saw for `owner`: the entries of its profile seen at an address of its service. */
function legacyNote(configPath: string, owner: StateOwner, warn?: NoteWarning): Note {
  const note: Note = { prices: {} };
  if (!adoptsLegacyState(owner)) return note; // the sandbox's were never kept
  const { file, profiles, prices } = legacyStore(dirname(configPath), owner.profile);
  const ours = (seen: unknown) => isRecord(seen) && typeof seen.base_url === 'string' && serviceOf(seen.base_url) === owner.service;
  const balance = profiles[owner.profile];
  if (ours(balance)) {
    const problem = balanceProblem(balance);
    if (problem === undefined) note.balance = keptBalance(balance as Record<string, unknown>);
    else warn?.(damagedNoteLine(file!, problem));
  }
  const routes = prices[owner.profile];
  for (const [route, seen] of Object.entries(isRecord(routes) ? routes : {})) {
    if (ours(seen) && isPrice(seen)) note.prices[route] = { credits: seen.credits, seen_at: seen.seen_at };
  }
  return note;
}

interface LegacyShape {
  /** The file read, if one was. */
  file?: string;
  profiles: Record<string, unknown>;
  prices: Record<string, unknown>;
}

/** The 3.x store holding `profile`'s note: its own file, or where it has none, credits.json. */
function legacyStore(folder: string, profile: string): LegacyShape {
  const shared = join(folder, 'credits.json');
  const own = profile === DEFAULT_PROFILE ? shared : join(folder, `credits.${legacyName(profile)}.json`);
  return readLegacy(own) ?? (own === shared ? undefined : readLegacy(shared)) ?? { profiles: {}, prices: {} };
}

/** A profile name as sgq 3.4 put it in a file name: '/' and what Windows refuses escaped. */
const legacyName = (profile: string) => encodeURIComponent(profile).replace(/[*!'()~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

function readLegacy(file: string): LegacyShape | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readRegularFile(file, 'utf8'));
  } catch (error) {
    // Missing: not there. Damaged or unreadable: there, with nothing known in it.
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? undefined : { profiles: {}, prices: {} };
  }
  const store = isRecord(parsed) ? parsed : {};
  return { file, profiles: isRecord(store.profiles) ? store.profiles : {}, prices: isRecord(store.prices) ? store.prices : {} };
}
