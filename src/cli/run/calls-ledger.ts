import { closeSync, fstatSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { SpendWatch } from '../../core/price-meter.js';
import type { StateOwner } from '../../core/service.js';
import { appendRecord, emptyRecords, openFlag, openForAppend, writeFlag } from '../../fs/atomic.js';
import { makePrivateFolder } from '../../fs/modes.js';
import { processAlive, thisProcessStart } from '../../fs/owner.js';
import { readRegularFile } from '../../fs/read.js';
import { removeFile } from '../../fs/remove.js';
import { hostTag } from '../../fs/temp-names.js';
import { creditsFolder } from './credits-store.js';

// The calls ledger of one account (a service and a profile; credits-store.ts gives its folder):
// which sgq processes of this machine are calling the service. A drop of the balance between
// two calls of this process is taken for a price only when no other process was calling at
// any moment in between.
//
//   calls/seq                       a byte appended by a process each time it goes idle
//   calls/PID.START.HOST.TAG.call   '1' while that process is busy: raised before its first
//                                   call is sent, lowered once it has made none for IDLE_MS
//
// Going idle appends a byte, then lowers the flag. A call's mark is seq's size when it starts;
// quietSince(mark) holds when seq grew by this process's own bytes alone since the mark and no
// other flag is up, the flags read after a first look at seq and before a second: a process
// that goes idle in between shows in one or the other. A call of another process charged
// between two balances was sent while its process was busy; that spell either lasts still (its
// flag is up) or ended after the charge, so after the mark (its byte is in seq). A call costs
// two stats; a process's busy spell, two one-byte writes; the folder is listed again only
// when seq shows another process went idle since it was last listed. A file replaced through
// a rename at every call would cost more than the rest of a page's bookkeeping.
//
// A process killed while busy leaves its flag up. Whoever finds its pid gone (or reused: the
// start time differs) appends a byte, so that every interval it could have shared is spoiled,
// and removes it; a flag of another host, whose pid means nothing here, once it has sat
// untouched for OTHER_HOST_STALE_MS.

const SEQ = 'seq';
const UP = Uint8Array.of(0x31);
const DOWN = Uint8Array.of(0x30);
/** A process idle this long lowers its flag: calls back to back keep it up, at no cost. */
const IDLE_MS = 100;
/** Past this size seq starts again from nothing (the intervals that cross it are spoiled). */
const SEQ_LIMIT = 1 << 16;
const OTHER_HOST_STALE_MS = 10 * 60_000;
/** How often a busy process checks its flag is still the file the others read. */
const RECHECK_MS = 1000;
/** A flag's name: pid, start time (Linux; empty elsewhere), host tag, a tag of its own. */
const FLAG_NAME = /^(\d+)\.(\d*)\.([0-9a-f]{8})\.[0-9a-f]{8}\.call$/;

/** Where a call of this process started: seq's file and size, and how many of its bytes were this process's. */
export interface CallMark {
  ino: number;
  size: number;
  own: number;
}

export class CallsLedger implements SpendWatch<CallMark> {
  private seqFd = -1;
  private seqIno = -1;
  private flagFd = -1;
  private flagUp = false;
  private flagChecked = 0;
  /** Bytes this process appended to seq. */
  private own = 0;
  private inFlight = 0;
  private idleTimer?: NodeJS.Timeout;
  /** The other flags as last listed, and where seq stood just before. */
  private others: string[] = [];
  private listedAt?: CallMark;
  /** The ledger could not be kept up: no interval is vouched for. */
  private broken = false;
  private readonly flagName = `${process.pid}.${thisProcessStart() ?? ''}.${hostTag()}.${random8()}.call`;

  private readonly seqPath: string;

  private constructor(
    private readonly folder: string,
    private readonly idleMs: number,
  ) {
    this.seqPath = join(folder, SEQ);
  }

  /** The ledger of `owner`, opened; undefined where there is no folder for it, or none can be written. */
  static open(configPath: string | undefined, owner: StateOwner, { idleMs = IDLE_MS } = {}): CallsLedger | undefined {
    const base = creditsFolder(configPath, owner);
    if (base === undefined) return undefined;
    const ledger = new CallsLedger(join(base, 'calls'), idleMs);
    try {
      ledger.openFiles();
      ledger.sweep();
      return ledger;
    } catch {
      ledger.close();
      return undefined;
    }
  }

  started(): CallMark {
    const mark = this.mark();
    clearTimeout(this.idleTimer);
    this.inFlight++;
    try {
      if (!this.flagUp) this.raiseFlag();
    } catch {
      this.broken = true;
    }
    return mark;
  }

  ended(): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
    if (this.inFlight > 0) return;
    if (this.idleMs === 0) return this.idle();
    this.idleTimer = setTimeout(() => this.idle(), this.idleMs).unref();
  }

  quietSince(mark: CallMark): boolean {
    if (this.broken) return false;
    try {
      const now = this.seqNow();
      if (!this.untouched(now, mark)) return false;
      if (this.listedAt === undefined || !this.untouched(now, this.listedAt)) this.listOthers(now);
      if (this.others.length === 0) return true;
      if (this.others.some((name) => this.busy(name))) return false;
      // Again after the flags: a process that went idle after the first look appended before it lowered its flag.
      return this.untouched(this.seqNow(), mark);
    } catch {
      return false;
    }
  }

  /** Goes idle: a byte, then the flag lowered (see above). */
  idle(): void {
    if (!this.flagUp || this.inFlight > 0) return;
    try {
      appendRecord(this.seqFd, UP);
      this.own++;
      writeFlag(this.flagFd, DOWN);
      this.flagUp = false;
    } catch {
      this.broken = true;
    }
  }

  /** Goes idle and removes this process's flag; never throws. */
  close(): void {
    clearTimeout(this.idleTimer);
    if (this.inFlight === 0) this.idle();
    try {
      this.seqFd = closedFd(this.seqFd);
      this.flagFd = closedFd(this.flagFd);
      // A flag left up (a call never ended) is removed by the next process that finds this one gone.
      if (!this.flagUp) removeFile(join(this.folder, this.flagName));
    } catch {
      // Best effort: a flag left down spoils nothing, and goes with the next sweep.
    }
  }

  /** seq as it stands: its file and size. */
  private seqNow(): { ino: number; size: number } {
    return statSync(this.seqPath);
  }

  /** Whether seq, as `now`, is the same file and grew by this process's own bytes alone since `mark`. */
  private untouched(now: { ino: number; size: number }, mark: CallMark): boolean {
    return now.ino === mark.ino && now.size - mark.size === this.own - mark.own;
  }

  /**
   * Lists the other flags, with where seq stood just before (`now`): the list holds for as long
   * as seq shows no other process at work, since a process appends before its first call.
   */
  private listOthers(now: { ino: number; size: number }): void {
    this.others = readdirSync(this.folder).filter((name) => name !== this.flagName && FLAG_NAME.test(name));
    this.listedAt = { ino: now.ino, size: now.size, own: this.own };
  }

  private openFiles(): void {
    makePrivateFolder(this.folder);
    this.openSeq();
    this.flagFd = closedFd(this.flagFd);
    this.flagFd = openFlag(join(this.folder, this.flagName));
    writeFlag(this.flagFd, this.flagUp ? UP : DOWN);
    this.flagChecked = Date.now();
  }

  private openSeq(): void {
    this.seqFd = closedFd(this.seqFd);
    this.seqFd = openForAppend(this.seqPath);
    this.seqIno = fstatSync(this.seqFd).ino;
  }

  /** Where seq stands now; appends go to the file the others read (it may have been removed and made again). */
  private mark(): CallMark {
    try {
      let stat: { ino: number; size: number } | undefined = statSync(this.seqPath, { throwIfNoEntry: false });
      if (stat === undefined || stat.ino !== this.seqIno) {
        this.openFiles();
        stat = this.seqNow();
      }
      if (stat.size >= SEQ_LIMIT) {
        emptyRecords(this.seqFd);
        stat = this.seqNow();
      }
      return { ino: stat.ino, size: stat.size, own: this.own };
    } catch {
      this.broken = true;
      return { ino: -1, size: -1, own: this.own };
    }
  }

  /** Raises this process's flag, in a file made again if someone removed it (it took this process for dead). */
  private raiseFlag(): void {
    if (Date.now() - this.flagChecked > RECHECK_MS) {
      if (fstatSync(this.flagFd).nlink === 0) this.openFiles();
      this.flagChecked = Date.now();
    }
    writeFlag(this.flagFd, UP);
    this.flagUp = true;
  }

  /**
   * Whether the process of the flag `name` is busy: its flag is up. One that died busy is
   * counted as a call now (every interval it could have shared is spoiled) and removed.
   */
  private busy(name: string): boolean {
    const path = join(this.folder, name);
    if (flagIn(path) !== '1') return false;
    if (!gone(name, path)) return true;
    this.removeDead(path, true);
    return true;
  }

  /** Removes the flags of processes gone (crashed, most likely); a flag left up counts as a call. */
  private sweep(): void {
    for (const name of readdirSync(this.folder)) {
      const path = join(this.folder, name);
      if (name !== this.flagName && FLAG_NAME.test(name) && gone(name, path)) this.removeDead(path, flagIn(path) === '1');
    }
  }

  private removeDead(path: string, wasUp: boolean): void {
    // Not this process's own byte: its own later intervals must see it too.
    if (wasUp) appendRecord(this.seqFd, UP);
    removeFile(path);
  }
}

/** A flag as its file holds it: '1', '0', or undefined when it is gone or not a regular file. */
function flagIn(path: string): string | undefined {
  try {
    return readRegularFile(path, 'latin1').charAt(0);
  } catch {
    return undefined;
  }
}

/** Whether the process of a flag is gone: by pid and start time on this host, by age on another. */
function gone(name: string, path: string): boolean {
  const [, pid, start, host] = FLAG_NAME.exec(name)!;
  if (host === hostTag()) return !processAlive(Number(pid), start || undefined);
  const stat = statSync(path, { throwIfNoEntry: false });
  return stat !== undefined && Date.now() - stat.mtimeMs > OTHER_HOST_STALE_MS;
}

const random8 = () => Math.floor(Math.random() * 0x1_0000_0000).toString(16).padStart(8, '0');

/**
 * Closes `fd` (if open) and returns -1 to store in its place, set before a later open that may
 * fail: the number is never closed twice, so never while it is another file's.
 */
function closedFd(fd: number): -1 {
  if (fd >= 0) {
    try {
      closeSync(fd);
    } catch {
      // Linux releases a descriptor even when close reports an error: it is not ours any more.
    }
  }
  return -1;
}
