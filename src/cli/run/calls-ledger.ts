import { closeSync, fstatSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { SpendWatch } from '../../core/price-meter.js';
import type { StateOwner } from '../../core/service.js';
import { appendRecord, emptyRecords, openFlag, openForAppend, writeFlag } from '../../fs/atomic.js';
import { makePrivateFolder } from '../../fs/modes.js';
import { processAlive, processStart } from '../../fs/owner.js';
import { readRegularFile } from '../../fs/read.js';
import { hostTag } from '../../fs/temp-names.js';
import { creditsFolder } from './credits-store.js';

// The calls ledger of one account (a service and a profile; credits-store.ts gives its folder):
// which sgq processes of this machine have a call in flight, and a count of everyone's call
// starts and ends. A drop of the balance between two calls of this process is taken for a
// price only when no other process had a call in flight at any moment in between.
//
//   calls/seq                       a byte appended by every process at each call's start and end
//   calls/PID.START.HOST.TAG.call   '1' while that process has a call in flight, else '0'
//
// A call starts: seq's size is taken (its mark), the flag raised, a byte appended, and only then
// is the request sent. It ends: a byte is appended, then the flag lowered. quietSince(mark)
// reads the other flags first, then seq's size: quiet when no flag is up and seq grew by this
// process's own bytes alone. A call of another process charged in between was in flight when
// the flags were read, or it started or ended after the mark, and its byte is in seq. Each
// step writes a byte or stats a file in place (microseconds): a file replaced through a rename
// at every call would cost more than the rest of a page's bookkeeping.
//
// A process killed in a call leaves its flag up. Whoever finds its pid gone (or reused: the
// start time differs) appends a byte, so that every interval its call could have shared is
// spoiled, and removes it; a flag of another host, whose pid means nothing here, once it has
// sat untouched for OTHER_HOST_STALE_MS.

const SEQ = 'seq';
const UP = Uint8Array.of(0x31);
const DOWN = Uint8Array.of(0x30);
/** Past this size seq starts again from nothing (the intervals that cross it are spoiled). */
const SEQ_LIMIT = 1 << 16;
const OTHER_HOST_STALE_MS = 10 * 60_000;
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
  /** Bytes this process appended to seq. */
  private own = 0;
  private inFlight = 0;
  /** The ledger could not be kept up: no interval is vouched for. */
  private broken = false;
  private readonly flagName = `${process.pid}.${processStart(process.pid) ?? ''}.${hostTag()}.${random8()}.call`;

  private constructor(private readonly folder: string) {}

  /** The ledger of `owner`, opened; undefined where there is no folder for it, or none can be written. */
  static open(configPath: string | undefined, owner: StateOwner): CallsLedger | undefined {
    const base = creditsFolder(configPath, owner);
    if (base === undefined) return undefined;
    const ledger = new CallsLedger(join(base, 'calls'));
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
    try {
      if (this.inFlight++ === 0) this.raiseFlag();
      this.append();
    } catch {
      this.broken = true;
    }
    return mark;
  }

  ended(): void {
    try {
      this.append();
      if (this.inFlight === 1) writeFlag(this.flagFd, DOWN);
    } catch {
      this.broken = true;
    } finally {
      this.inFlight = Math.max(0, this.inFlight - 1);
    }
  }

  quietSince(mark: CallMark): boolean {
    if (this.broken) return false;
    try {
      // The flags first, then seq: a call that ends in between is in one or the other.
      for (const name of readdirSync(this.folder)) {
        if (name !== this.flagName && name.endsWith('.call') && this.busy(name)) return false;
      }
      const now = statSync(join(this.folder, SEQ));
      return now.ino === mark.ino && now.size - mark.size === this.own - mark.own;
    } catch {
      return false;
    }
  }

  /** Removes this process's flag; never throws. */
  close(): void {
    try {
      if (this.seqFd >= 0) closeSync(this.seqFd);
      if (this.flagFd >= 0) closeSync(this.flagFd);
      // A flag left up (a call never ended) is removed by the next process that finds this one gone.
      if (this.inFlight === 0) rmSync(join(this.folder, this.flagName), { force: true });
    } catch {
      // Best effort: a flag left down spoils nothing, and goes with the next sweep.
    }
    this.seqFd = this.flagFd = -1;
  }

  private openFiles(): void {
    makePrivateFolder(this.folder);
    this.openSeq();
    if (this.flagFd >= 0) closeSync(this.flagFd);
    this.flagFd = openFlag(join(this.folder, this.flagName));
    writeFlag(this.flagFd, this.inFlight > 0 ? UP : DOWN);
  }

  private openSeq(): void {
    if (this.seqFd >= 0) closeSync(this.seqFd);
    this.seqFd = openForAppend(join(this.folder, SEQ));
    this.seqIno = fstatSync(this.seqFd).ino;
  }

  /** Where seq stands now; appends go to the file the others read (it may have been removed and made again). */
  private mark(): CallMark {
    try {
      let stat = statSync(join(this.folder, SEQ), { throwIfNoEntry: false });
      if (stat === undefined || stat.ino !== this.seqIno) {
        this.openFiles();
        stat = statSync(join(this.folder, SEQ));
      }
      if (stat.size >= SEQ_LIMIT) {
        emptyRecords(this.seqFd);
        stat = statSync(join(this.folder, SEQ));
      }
      return { ino: stat.ino, size: stat.size, own: this.own };
    } catch {
      this.broken = true;
      return { ino: -1, size: -1, own: this.own };
    }
  }

  /** Raises this process's flag, in a file made again if someone removed it (it took this process for dead). */
  private raiseFlag(): void {
    if (fstatSync(this.flagFd).nlink === 0) this.openFiles();
    writeFlag(this.flagFd, UP);
  }

  private append(): void {
    appendRecord(this.seqFd, UP);
    this.own++;
  }

  /**
   * Whether the process of the flag `name` has a call in flight: its flag is up. One that died
   * in its call is counted as a call now (every interval it could have shared is spoiled) and
   * removed.
   */
  private busy(name: string): boolean {
    const path = join(this.folder, name);
    if (!FLAG_NAME.test(name) || flagIn(path) !== '1') return false;
    if (!gone(name, path)) return true;
    this.removeDead(path, true);
    return true;
  }

  /** Removes the flags of processes gone (crashed, most likely); a flag left up counts as a call. */
  private sweep(): void {
    for (const name of readdirSync(this.folder)) {
      const path = join(this.folder, name);
      if (name !== this.flagName && name.endsWith('.call') && gone(name, path)) this.removeDead(path, flagIn(path) === '1');
    }
  }

  private removeDead(path: string, wasUp: boolean): void {
    // Not this process's own byte: its own later intervals must see it too.
    if (wasUp) appendRecord(this.seqFd, UP);
    rmSync(path, { force: true });
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
  const parsed = FLAG_NAME.exec(name);
  if (!parsed) return false; // not a flag of sgq's: left alone
  const [, pid, start, host] = parsed;
  if (host === hostTag()) return !processAlive(Number(pid), start || undefined);
  const stat = statSync(path, { throwIfNoEntry: false });
  return stat !== undefined && Date.now() - stat.mtimeMs > OTHER_HOST_STALE_MS;
}

const random8 = () => Math.floor(Math.random() * 0x1_0000_0000).toString(16).padStart(8, '0');
